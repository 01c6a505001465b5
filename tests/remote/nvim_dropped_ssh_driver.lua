-- Drives editors/nvim over `--remote` for tests/remote/test_neovim_dropped_ssh.py: a turn
-- streams; the test kills ssh when told (a marker file), and the statusline is read once the
-- bridge is connected again (the turn goes on over there) and once the turn has ended.
local T = dofile(os.getenv("OPENVAALA_TEST_SUPPORT"))
local results, wait = T.results, T.wait

local function mark(name)
  local f = assert(io.open(os.getenv("OPENVAALA_TEST_MARKS") .. "/" .. name, "w"))
  f:close()
end

-- What the plugin says, in order (it tells of the connection through vim.notify).
local said = {}
vim.notify = function(message)
  table.insert(said, message)
end

T.run(function(ov)
  local new = T.call("new conversation", ov.request, "openvaala/conversations/new", {
    cwd = os.getenv("OPENVAALA_TEST_CWD"),
  })
  local cid = new.conversation.conversationId
  ov.state.current = cid
  local answer
  ov.prompt("go", "queue", function(e, r)
    answer = e or r
  end, cid)
  wait("running", function()
    return ov.statusline():find("●") ~= nil
  end)
  results.before_drop = ov.statusline()
  mark("streaming")
  wait("reconnected", function()
    for _, message in ipairs(said) do
      if message:find("reconnected to the daemon", 1, true) then
        return true
      end
    end
    return false
  end, 60000)
  results.after_reconnect = ov.statusline()
  results.said = said
  mark("reconnected")
  wait("answered", function()
    return answer ~= nil
  end, 60000)
  results.answer = answer
  wait("idle", function()
    return ov.statusline():find("●") == nil
  end)
  results.after_turn = ov.statusline()
end)
