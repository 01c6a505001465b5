-- Drives the chat sidebar for tests/lsp/test_neovim_sidebar_back.py: with A then B opened in the
-- sidebar, the user goes back in the transcript window (<C-o>, as in any window) to A's
-- transcript. The composer below must then be A's, so what is typed goes to A. Then a refused
-- send gives its text back without losing what was typed meanwhile. Writes what it saw.
local T = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/nvim_support.lua")
local results, wait = T.results, T.wait

T.run(function(ov)
  local chat = require("openvaala.chat")
  local function name(win)
    return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win))
  end
  vim.cmd("OpenVaalaNew")
  wait("A", function()
    return chat.shown() ~= nil
  end)
  local a = chat.shown()
  vim.cmd("OpenVaalaNew")
  wait("B", function()
    return chat.shown() ~= nil and chat.shown() ~= a
  end)
  local b = chat.shown()
  vim.api.nvim_buf_set_lines(chat.composers[b], 0, -1, false, { "draft for B" })
  vim.api.nvim_set_current_win(chat.pair.transcript)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<C-o>", true, false, true), "x", false)
  results.transcript = name(chat.pair.transcript)
  results.composer = name(chat.pair.composer)
  results.shown = chat.shown()
  results.draft_b = vim.api.nvim_buf_get_lines(chat.composers[b], 0, -1, false)
  -- Typed in the composer on screen and sent.
  vim.api.nvim_set_current_win(chat.pair.composer)
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "typed after going back" })
  vim.fn.maparg("<C-s>", "n", false, true).callback()
  wait("the turn", function()
    return ov.state.replies[a] ~= nil or ov.state.replies[b] ~= nil
  end)
  results.cids = { a = a, b = b }

  -- A send the bridge refuses (a conversation the daemon does not know): the text comes back,
  -- and what was typed while the answer was on its way is kept after it.
  local gone = string.rep("0", 32)
  local bufnr = chat.composer(gone)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, { "the refused message" })
  chat.submit(gone, "queue")
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, { "typed meanwhile" })
  wait("the refused text back", function()
    return vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1] == "the refused message"
  end)
  results.refused = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end)
