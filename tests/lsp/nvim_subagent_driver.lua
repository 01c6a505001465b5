-- Drives editors/nvim in a headless Neovim for tests/lsp/test_neovim_subagent.py: the root agent
-- starts a subagent; :OpenVaalaFollow opens the subagent's transcript, which names the parent's
-- task as such, and whose statusline shows the subagent's own usage. Writes what it saw as JSON
-- to $OPENVAALA_TEST_OUT and quits.
local T = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/nvim_support.lua")
local results, wait = T.results, T.wait
results.selects = {}

-- The picker answers with the subagent (the entry one level down).
vim.ui.select = function(items, opts, on_choice)
  local shown = {}
  for _, item in ipairs(items) do
    table.insert(shown, opts.format_item(item))
  end
  table.insert(results.selects, shown)
  for _, item in ipairs(items) do
    if item.depth == 1 then
      return on_choice(item)
    end
  end
  on_choice(nil)
end

T.run(function(ov)
  vim.cmd("OpenVaalaNew")
  wait("chat opened", function()
    return ov.state.current ~= nil
  end)
  local cid = ov.state.current
  local turn = T.call("root turn", ov.prompt, "spawn: say hello", "queue")
  results.turn = turn
  local function lines(bufnr)
    return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  end
  vim.cmd("OpenVaalaFollow")
  local child
  wait("subagent transcript", function()
    local name = vim.api.nvim_buf_get_name(0)
    child = name:match("/session/(%x+)$")
    return child ~= nil
  end)
  local bufnr = vim.api.nvim_get_current_buf()
  wait("task and usage drawn", function()
    local text = table.concat(lines(bufnr), "\n")
    return text:find("## Task from", 1, true) ~= nil and text:find("· context ", 1, true) ~= nil
  end)
  wait("subagent's usage reported", function()
    return ov.state.session_usage[child] ~= nil and ov.state.usage[cid] ~= nil
  end)
  results.child = child
  results.transcript = lines(bufnr)
  results.statusline = ov.statusline()
  results.child_usage = ov.state.session_usage[child].text
  results.root_usage = ov.state.usage[cid].text
end)
