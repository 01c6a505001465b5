-- Drives the chat layout of editors/nvim in a headless Neovim for tests/lsp/test_neovim_chat.py;
-- writes what it saw as JSON to $OPENVAALA_TEST_OUT and quits.
local T = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/nvim_support.lua")
local results, wait = T.results, T.wait

local function layout()
  local wins = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local pos = vim.api.nvim_win_get_position(win)
    table.insert(wins, {
      name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)),
      row = pos[1],
      col = pos[2],
      current = win == vim.api.nvim_get_current_win(),
    })
  end
  return wins
end

local function press(lhs, mode)
  local map = vim.fn.maparg(lhs, mode or "n", false, true)
  assert(map.callback, "no buffer-local mapping for " .. lhs)
  map.callback()
end

T.run(function(ov)
  local chat = require("openvaala.chat")

  vim.cmd.edit("code.py")
  local code_win = vim.api.nvim_get_current_win()
  vim.cmd("OpenVaalaNew sub")
  wait("chat opened", function()
    return ov.state.current ~= nil and chat.chat(ov.state.current) ~= nil
  end)
  local cid = ov.state.current
  results.cid = cid
  results.layout = layout()
  results.code_win_kept = vim.api.nvim_win_is_valid(code_win)
    and vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(code_win)):match("code%.py$") ~= nil
  -- A multi-line prompt from the composer, sent with its key.
  local c = chat.chat(cid)
  vim.api.nvim_buf_set_lines(c.buf, 0, -1, false, { "line one", "## Assistant", "line three" })
  press("<C-s>")
  results.composer_after_send = vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)
  wait("first turn", function()
    return ov.state.replies[cid] == "first answer" and ov.state.status[cid] == "idle"
  end)

  local listed
  ov.request("openvaala/conversations/list", vim.empty_dict(), function(e, r)
    listed = e or r
  end)
  wait("listed", function()
    return listed ~= nil
  end)
  results.cwd = listed.conversations[1].cwd
  results.picker = ov.describe(listed.conversations[1])

  -- A ranged send from the code window: the lines go with their path and range.
  vim.api.nvim_set_current_win(code_win)
  vim.cmd("2,3OpenVaalaSend explain this")
  wait("second turn", function()
    return ov.state.replies[cid] == "second answer" and ov.state.status[cid] == "idle"
  end)
  local tbuf = vim.api.nvim_win_get_buf(c.transcript)
  wait("transcript", function()
    local text = table.concat(vim.api.nvim_buf_get_lines(tbuf, 0, -1, false), "\n")
    return text:find("second answer", 1, true) ~= nil
  end)
  results.transcript = vim.api.nvim_buf_get_lines(tbuf, 0, -1, false)

  -- Context added to the composer (whole buffer): path only.
  vim.api.nvim_set_current_win(code_win)
  vim.cmd("OpenVaalaAdd")
  results.context = vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)
  vim.api.nvim_buf_set_lines(c.buf, 0, -1, false, {})

  -- Rewind to before the multi-line message: it comes back whole in the new chat's composer.
  local snap
  ov.request("openvaala/subscribe", { conversationId = cid }, function(e, r)
    snap = e or r
  end)
  wait("snapshot", function()
    return snap ~= nil
  end)
  local first_message
  for _, item in ipairs(snap.snapshot.sessions[1].items) do
    if item.type == "user_message" and not first_message then
      first_message = item.itemId
    end
  end
  ov.command("openvaala.rewind", { { conversationId = cid, messageId = first_message } })
  wait("rewound", function()
    local cur = ov.state.current
    return cur ~= cid and chat.chat(cur) ~= nil and chat.text(chat.chat(cur).buf) ~= nil
  end)
  local rewound = chat.chat(ov.state.current)
  results.rewound_composer = vim.api.nvim_buf_get_lines(rewound.buf, 0, -1, false)

  -- q in the composer closes the sidebar.
  local before = #vim.api.nvim_tabpage_list_wins(0)
  vim.api.nvim_set_current_win(rewound.composer)
  press("q")
  results.closed = { before = before, after = #vim.api.nvim_tabpage_list_wins(0) }
  results.rewound_chat_gone = chat.chat(ov.state.current) == nil

  -- :checkhealth openvaala reports the bridge connected to the daemon.
  vim.cmd("checkhealth openvaala")
  results.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  vim.cmd("tabclose")

  -- kill -9 of the daemon: the bridge starts a new one and a prompt works again.
  vim.uv.kill(tonumber(os.getenv("OPENVAALA_TEST_DAEMON_PID")), "sigkill")
  wait("reconnected", function()
    return ov.state.connection == "connected"
  end, 40000)
  local again
  ov.prompt("after the crash", "queue", function(e, r)
    again = e or r
  end, cid)
  wait("prompt after the crash", function()
    return again ~= nil
  end, 30000)
  results.after_crash = again
end)
