-- Drives editors/nvim in a headless Neovim for tests/lsp/test_neovim_mode.py: the conversation's
-- permission mode in the statusline, switched with :OpenVaalaMode, and following a switch made
-- by another client. Writes what it saw as JSON to $OPENVAALA_TEST_OUT and quits.
local T = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/nvim_support.lua")
local cid, results, wait = T.cid, T.results, T.wait

-- The statusline as each announced mode first showed it: the test switches the mode back as
-- soon as it sees plan, so both may come in one batch of events.
results.shown = {}
vim.api.nvim_create_autocmd("User", {
  pattern = "OpenVaalaEvent",
  callback = function()
    local ov = require("openvaala")
    local mode = ov.permission_mode(cid)
    if mode and not results.shown[mode] then
      results.shown[mode] = ov.statusline()
    end
  end,
})

T.run(function(ov)
  ov.state.current = cid
  vim.cmd.edit("openvaala://conversation/" .. cid)
  wait("mode known", function()
    return ov.permission_mode(cid) ~= nil
  end)
  results.before = ov.statusline()
  results.completion = vim.fn.getcompletion("OpenVaalaMode ", "cmdline")

  vim.cmd("OpenVaalaMode plan")
  wait("plan announced", function()
    return results.shown.plan ~= nil
  end)
  -- The test switches it from its own client once it saw plan.
  wait("ask from another client", function()
    return results.shown.ask ~= nil
  end, 30000)

  local refused = T.call("auto-edit refused", ov.set_permission_mode, "auto-edit", cid)
  results.refused = refused.message or refused
  results.after = ov.statusline()
end)
