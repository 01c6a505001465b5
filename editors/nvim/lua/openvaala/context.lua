-- Context you can see and steer (docs/editors.md, "Context"):
--   :OpenVaalaContext      the next request's parts and tokens, in a float
--   :OpenVaalaContextJson  the provider body of the next request into the " and + registers
--   :OpenVaalaPin / :OpenVaalaUnpin   pick a message: compaction keeps it verbatim
--   :OpenVaalaReplaced     what the latest summary replaced; the transcript opens at it
-- The statusline's usage text already carries the gauge (threshold, "refresh in N").
local M = {}

local function notify(msg, level)
  vim.notify("OpenVaala: " .. msg, level or vim.log.levels.INFO)
end

--- A scratch float showing `lines`; returns its buffer.
function M.show(lines)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = "wipe"
  local width = 20
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line))
  end
  vim.api.nvim_open_win(buf, true, {
    relative = "editor",
    row = 2,
    col = 4,
    width = math.min(width + 2, vim.o.columns - 8),
    height = math.min(#lines, vim.o.lines - 6),
    style = "minimal",
    border = "rounded",
    title = " Context ",
  })
  vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = buf, nowait = true })
  M.last_buffer = buf
  return buf
end

--- Put the cursor on `location` ({uri, line}) once its transcript has that many lines.
function M.goto(location)
  local chat = require("openvaala.chat")
  if chat.is_transcript(location.uri) then -- in the chat sidebar, not the current window
    return chat.show(location.uri, { focus = "transcript", line = location.line })
  end
  local buf = vim.fn.bufnr(location.uri)
  if buf == -1 or vim.api.nvim_get_current_buf() ~= buf then
    vim.cmd.edit(location.uri)
    buf = vim.api.nvim_get_current_buf()
  end
  vim.wait(5000, function()
    return vim.api.nvim_buf_line_count(buf) > location.line
  end, 20)
  if vim.api.nvim_buf_line_count(buf) > location.line then
    vim.api.nvim_win_set_cursor(0, { location.line + 1, 0 })
  end
end

function M.setup(ov)
  local buffer = require("openvaala.buffer")
  local function cid()
    local id = buffer.conversation_of(0) or ov.state.current
    if not id then
      notify("no conversation: :OpenVaalaNew or :OpenVaalaList first", vim.log.levels.WARN)
    end
    return id
  end
  local function run(command, args, callback)
    ov.request("workspace/executeCommand", { command = command, arguments = args }, callback)
  end

  function ov.context(callback)
    local id = cid()
    if id then
      ov.request("openvaala/context", { conversationId = id }, callback)
    end
  end

  --- Pick one of the conversation's messages (`pinned`: those pinned, else the others).
  local function pick_message(pinned, prompt, callback)
    local id = cid()
    if not id then
      return
    end
    ov.request("openvaala/subscribe", { conversationId = id }, function(err, r)
      if err then
        return
      end
      local root = r.snapshot.sessions[1]
      local pins = {}
      for _, p in ipairs(root.pinned or {}) do
        pins[p] = true
      end
      local choices = {}
      for _, item in ipairs(root.items) do
        local message = item.type == "user_message" or item.type == "agent_message"
        if message and item.status == "completed" and (pins[item.itemId] == true) == pinned then
          table.insert(choices, item)
        end
      end
      vim.ui.select(choices, {
        prompt = prompt,
        format_item = function(item)
          local who = item.type == "user_message" and "you" or "agent"
          return who .. ": " .. (item.text or ""):gsub("\n", " "):sub(1, 70)
        end,
      }, function(item)
        if item then
          callback(id, item)
        end
      end)
    end)
  end

  local command = vim.api.nvim_create_user_command
  command("OpenVaalaContext", function()
    ov.context(function(err, r)
      if not err then
        local lines = vim.list_extend({}, r.lines)
        table.insert(lines, "")
        table.insert(lines, "context " .. r.gauge.text)
        M.show(lines)
      end
    end)
  end, { desc = "What the next request holds" })
  command("OpenVaalaContextJson", function()
    local id = cid()
    if not id then
      return
    end
    run("openvaala.contextJson", { id }, function(err, r)
      if err then
        return
      end
      if r.json == "" then
        notify("this model's provider has no request body")
        return
      end
      vim.fn.setreg('"', r.json)
      pcall(vim.fn.setreg, "+", r.json) -- no clipboard provider: the unnamed register has it
      notify("the request body is in the registers (" .. #r.json .. " characters)")
    end)
  end, { desc = "Copy the provider body of the next request" })
  for name, on in pairs({ OpenVaalaPin = true, OpenVaalaUnpin = false }) do
    command(name, function()
      pick_message(not on, on and "Pin a message" or "Unpin a message", function(id, item)
        run(on and "openvaala.pin" or "openvaala.unpin", { id, item.itemId }, function(err)
          if not err then
            notify(on and "pinned: compaction keeps it verbatim" or "unpinned")
          end
        end)
      end)
    end, { desc = on and "Pin a message (never summarized)" or "Unpin a message" })
  end
  command("OpenVaalaReplaced", function()
    local id = cid()
    if not id then
      return
    end
    ov.request("openvaala/subscribe", { conversationId = id }, function(err, r)
      if err then
        return
      end
      local summary
      for _, item in ipairs(r.snapshot.sessions[1].items) do
        if item.type == "summary" then
          summary = item
        end
      end
      if not summary then
        notify("no summary in this conversation")
        return
      end
      -- The bridge shows the transcript at the first replaced message (window/showDocument).
      run("openvaala.replaced", { id, summary.itemId }, function(e, result)
        if not e then
          M.last_replaced = result
          notify("the summary replaced " .. #result.items .. " items")
          if result.location then
            M.goto(result.location)
          end
        end
      end)
    end)
  end, { desc = "Show what the latest summary replaced" })
end

return M
