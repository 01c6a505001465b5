-- The init of the Neovim tests/lsp/test_neovim_tmux.py runs inside tmux: the plugin set up
-- against `python -m openvaala_server lsp`, and :OVState, which writes what the screen's windows
-- show (for the test to read beside tmux's capture of the screen).
vim.opt.rtp:prepend(os.getenv("OPENVAALA_TEST_PLUGIN"))
require("openvaala").setup({ cmd = { os.getenv("OPENVAALA_TEST_PYTHON"), "-m", "openvaala_server", "lsp" } })
vim.api.nvim_create_user_command("OVState", function()
  local wins = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local buf = vim.api.nvim_win_get_buf(win)
    table.insert(wins, { name = vim.api.nvim_buf_get_name(buf), lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false) })
  end
  local state = { tabs = #vim.api.nvim_list_tabpages(), wins = wins, shown = require("openvaala.chat").shown(), on_lens = vim.g.ov_on_lens }
  -- Written aside, then renamed: the test reads the file while polling, never half of it.
  local out = os.getenv("OPENVAALA_TEST_OUT")
  local f = assert(io.open(out .. ".tmp", "w"))
  f:write(vim.json.encode(state))
  f:close()
  assert(os.rename(out .. ".tmp", out))
end, {})
-- Focus the sidebar's composer (where the user would click).
vim.api.nvim_create_user_command("OVCompose", function()
  vim.api.nvim_set_current_win(require("openvaala.chat").pair.composer)
end, {})
-- Put the cursor on the transcript's first line with a "Fork here" lens (where the user would
-- move it), once the lenses are in.
vim.api.nvim_create_user_command("OVForkHereLine", function()
  local chat = require("openvaala.chat")
  local tbuf = vim.api.nvim_win_get_buf(chat.pair.transcript)
  for _, l in ipairs(vim.lsp.codelens.get(tbuf)) do
    if l.command and l.command.title == "Fork here" then
      vim.api.nvim_set_current_win(chat.pair.transcript)
      vim.api.nvim_win_set_cursor(0, { l.range.start.line + 1, 0 })
      vim.g.ov_on_lens = true
      return
    end
  end
end, {})
