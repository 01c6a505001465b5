-- Drives the chat sidebar of editors/nvim in a headless Neovim for
-- tests/lsp/test_neovim_sidebar.py: new, follow, fork, "Fork here" (its code lens), new again and
-- rewind each switch the one window pair in place; drafts wait per conversation; a message typed
-- after "Fork here" is sent from the composer on screen. Writes what it saw as JSON.
local T = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/nvim_support.lua")
local results, wait = T.results, T.wait

-- vim.ui.select answers with the first item whose label contains `T.pick` (lens titles, agents).
local pick
vim.ui.select = function(items, opts, on_choice)
  for _, item in ipairs(items) do
    local label = opts.format_item and opts.format_item(item) or tostring(item)
    if pick and label:find(pick, 1, true) then
      return on_choice(item)
    end
  end
  on_choice(nil)
end

local function lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

T.run(function(ov)
  local chat = require("openvaala.chat")
  vim.cmd.edit("code.py")
  local code_win = vim.api.nvim_get_current_win()

  -- What the screen shows: every window's buffer, and which conversation the sidebar is on.
  local function screen()
    local wins = {}
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win))
      table.insert(wins, (name:gsub("^.*/code%.py$", "code.py")))
    end
    local pair = chat.pair
    return {
      wins = wins,
      tabs = #vim.api.nvim_list_tabpages(),
      code_win = vim.api.nvim_win_is_valid(code_win) and vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(code_win)):match("code%.py$") ~= nil,
      transcript = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(pair.transcript)),
      composer = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(pair.composer)),
      shown = chat.shown(),
    }
  end
  local function switched(what, from)
    wait(what, function()
      local now = chat.shown()
      return now ~= nil and not vim.tbl_contains(from, now)
    end)
    return chat.shown()
  end
  local function draft(cid, text)
    vim.api.nvim_buf_set_lines(chat.composers[cid], 0, -1, false, text)
  end

  vim.cmd("OpenVaalaNew")
  local a = switched("new", {})
  T.call("first turn", ov.prompt, "spawn: say hello", "queue")
  draft(a, { "draft for A", "its second line" })
  results.new = screen()

  -- Follow the subagent: its transcript in the sidebar, A's composer (and draft) below it.
  pick = "worker"
  vim.cmd("OpenVaalaFollow")
  wait("follow", function()
    return chat.pair and vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(chat.pair.transcript)):find("/session/") ~= nil
  end)
  results.follow = screen()
  results.follow_composer = lines(vim.api.nvim_win_get_buf(chat.pair.composer))

  vim.cmd("OpenVaalaFork")
  local b = switched("fork", { a })
  results.fork = screen()
  draft(b, { "draft for B" })

  -- Back to A: its draft waits. Then its "Fork here" lens, run from the transcript.
  vim.cmd("OpenVaalaOpen " .. a)
  switched("back to A", { b })
  results.back_to_a = lines(vim.api.nvim_win_get_buf(chat.pair.composer))
  local tbuf = vim.api.nvim_win_get_buf(chat.pair.transcript)
  local lens
  wait("Fork here lens", function()
    for _, l in ipairs(vim.lsp.codelens.get(tbuf)) do
      if l.command and l.command.title == "Fork here" then
        lens = l
        return true
      end
    end
    return false
  end)
  vim.api.nvim_set_current_win(chat.pair.transcript)
  vim.api.nvim_win_set_cursor(0, { lens.range.start.line + 1, 0 })
  pick = "Fork here"
  vim.lsp.codelens.run()
  local c = switched("Fork here", { a, b })
  results.fork_here = screen()
  -- Typed and sent from the composer on screen, as a user would.
  vim.api.nvim_set_current_win(chat.pair.composer)
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "typed after Fork here" })
  vim.fn.maparg("<C-s>", "n", false, true).callback()
  wait("the fork's turn", function()
    return ov.state.replies[c] ~= nil and ov.state.status[c] == "idle"
  end)

  vim.cmd("OpenVaalaNew")
  local d = switched("new again", { a, b, c })
  results.new_again = screen()

  local snap = T.call("A's snapshot", ov.request, "openvaala/subscribe", { conversationId = a })
  local first
  for _, item in ipairs(snap.snapshot.sessions[1].items) do
    first = first or (item.type == "user_message" and item.itemId or nil)
  end
  ov.command("openvaala.rewind", { { conversationId = a, messageId = first } })
  local e = switched("rewind", { a, b, c, d })
  wait("rewound text", function()
    return chat.text(chat.composers[e]) ~= nil
  end)
  results.rewind = screen()
  results.rewound_composer = lines(chat.composers[e])
  results.drafts = { a = lines(chat.composers[a]), b = lines(chat.composers[b]) }
  results.cids = { a = a, b = b, c = c, d = d, e = e }
end)
