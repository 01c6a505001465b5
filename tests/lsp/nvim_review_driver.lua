-- Drives the approval review of editors/nvim (openvaala/review.lua) in a headless Neovim for
-- tests/lsp/test_neovim_review.py: a write's approval opens as a diff in a tab of its own; `ga`
-- accepts it, and the next one is rejected with `gr`. Writes what it saw as JSON.
local T = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/nvim_support.lua")
local cid, results, wait = T.cid, T.results, T.wait

local function press(lhs)
  local map = vim.fn.maparg(lhs, "n", false, true)
  assert(map.callback, "no buffer-local mapping for " .. lhs)
  map.callback()
end

-- What the review tab shows: each window's lines and whether it is in diff mode.
local function review()
  local wins = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local bufnr = vim.api.nvim_win_get_buf(win)
    table.insert(wins, {
      name = vim.api.nvim_buf_get_name(bufnr),
      lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false),
      diff = vim.wo[win].diff,
      filetype = vim.bo[bufnr].filetype,
    })
  end
  return wins
end

T.run(function(ov)
  local approvals = require("openvaala.approvals")
  vim.cmd.edit("code.py")
  local user_win = vim.api.nvim_get_current_win()
  T.call("subscribed", ov.request, "openvaala/subscribe", { conversationId = cid })
  ov.state.current = cid

  local turns = {}
  for i, key in ipairs({ "ga", "gr" }) do
    ov.prompt("change it", "queue", function(e, r)
      turns[i] = e or r
    end, cid)
    wait("review " .. i, function()
      return #vim.api.nvim_list_tabpages() == 2 and vim.wo.diff
    end)
    press("]f") -- the next file of a one-file change: the same file stays
    results["review" .. i] = review()
    press(key)
    wait("answered " .. i, function()
      return turns[i] ~= nil and #vim.api.nvim_list_tabpages() == 1
    end)
  end
  results.turns = turns
  results.pending = approvals.count(cid)
  results.user_win_kept = vim.api.nvim_get_current_win() == user_win
end)
