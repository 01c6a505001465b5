-- Drives editors/nvim in a headless Neovim for tests/lsp/test_neovim_mcp.py: a resource picked
-- with :OpenVaalaResource and sent from the composer, a prompt picked with :OpenVaalaPrompt,
-- filled in and sent, and a malformed prompt command refused. Writes what it saw as JSON to
-- $OPENVAALA_TEST_OUT and quits.
local T = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/nvim_support.lua")
local results, wait = T.results, T.wait
results.selects, results.notified = {}, {}

-- The user picks the first item offered; what was offered is recorded.
vim.ui.select = function(items, opts, on_choice)
  local shown = {}
  for _, item in ipairs(items) do
    table.insert(shown, opts.format_item and opts.format_item(item) or tostring(item))
  end
  table.insert(results.selects, { prompt = opts.prompt, items = shown })
  on_choice(items[1], 1)
end
local notify = vim.notify
vim.notify = function(message, level, opts)
  table.insert(results.notified, message)
  return notify(message, level, opts)
end

local function press(lhs)
  local map = vim.fn.maparg(lhs, "n", false, true)
  assert(map.callback, "no buffer-local mapping for " .. lhs)
  map.callback()
end

T.run(function(ov)
  local chat = require("openvaala.chat")
  local cid = T.cid
  local c = chat.open(cid)
  local function composer()
    return vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)
  end
  local function replied(text)
    return function()
      return ov.state.replies[cid] == text and ov.state.status[cid] == "idle"
    end
  end

  -- The composer completes `/…` with the ready servers' prompts (its omnifunc).
  vim.api.nvim_set_current_win(c.composer)
  vim.api.nvim_buf_set_lines(c.buf, 0, -1, false, { "/mcp__t" })
  vim.api.nvim_win_set_cursor(c.composer, { 1, 7 })
  local omni = vim.bo[c.buf].omnifunc:match("^v:lua%.(.*)$")
  results.omnifunc = omni
  local complete = require("openvaala.mcp").complete
  results.completion = { start = complete(1, ""), items = complete(0, "/mcp__t") }
  vim.api.nvim_buf_set_lines(c.buf, 0, -1, false, { "plain words" })
  vim.api.nvim_win_set_cursor(c.composer, { 1, 5 })
  results.no_completion = complete(1, "")

  vim.api.nvim_buf_set_lines(c.buf, 0, -1, false, { "plan my day" })
  vim.cmd("OpenVaalaResource")
  wait("resource picked", function()
    return composer()[1] ~= "plan my day"
  end)
  results.with_resource = composer()
  press("<C-s>")
  wait("resource sent", replied("noted"))

  vim.cmd("OpenVaalaPrompt")
  wait("prompt picked", function()
    return (composer()[1] or ""):match("^/mcp__") ~= nil
  end)
  results.with_prompt = composer()
  vim.api.nvim_buf_set_lines(c.buf, 0, -1, false, { '/mcp__t__review file="my app.py"' })
  press("<C-s>")
  wait("prompt sent", replied("reviewed"))

  vim.api.nvim_buf_set_lines(c.buf, 0, -1, false, { "/mcp__t__review file" })
  press("<C-s>")
  wait("refused", function()
    return composer()[1] == "/mcp__t__review file" and #results.notified > 0
  end)
  results.after_refusal = composer()
end)
