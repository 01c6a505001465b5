-- The chat layout: the transcript in a split on the right (the current window is kept) and a
-- multi-line composer buffer below it.
--
--   composer:   <C-s> (normal/insert) or <CR> (normal) send, queued after the running turn
--               <M-s> steer the running turn, <M-j> interrupt it and send, <C-c> interrupt
--   both:       q closes the chat (the transcript buffer stays loaded)

local M = {}
local ov -- the openvaala module (set in setup)

M.chats = {} -- cid -> { transcript = win, composer = win, buf = composer bufnr }

local function valid(win)
  return win and vim.api.nvim_win_is_valid(win)
end

function M.close(cid)
  local chat = M.chats[cid]
  if not chat then
    return
  end
  M.chats[cid] = nil
  for _, win in ipairs({ chat.composer, chat.transcript }) do
    if valid(win) and #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(win, true)
    end
  end
end

--- The composer's text, or nil (with a message) when it is empty.
function M.text(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local text = vim.trim(table.concat(lines, "\n"))
  return text ~= "" and text or nil
end

function M.submit(cid, mode)
  local chat = M.chats[cid]
  if not chat or not vim.api.nvim_buf_is_valid(chat.buf) then
    return
  end
  local text = M.text(chat.buf)
  if not text then
    return vim.notify("OpenVaala: the composer is empty", vim.log.levels.WARN)
  end
  local kept = vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)
  vim.api.nvim_buf_set_lines(chat.buf, 0, -1, false, {})
  ov.send(text, mode, function(err)
    if err and vim.api.nvim_buf_is_valid(chat.buf) then -- not sent: give the text back
      vim.api.nvim_buf_set_lines(chat.buf, 0, -1, false, kept)
    end
  end, cid)
end

--- Put text (lines) into the composer, opening the chat if needed; `replace` empties it first.
function M.compose(cid, text, replace)
  local chat = M.open(cid)
  local lines = vim.split(text, "\n", { plain = true })
  if replace or M.text(chat.buf) == nil then
    vim.api.nvim_buf_set_lines(chat.buf, 0, -1, false, lines)
  else
    vim.api.nvim_buf_set_lines(chat.buf, -1, -1, false, { "", unpack(lines) })
  end
  if valid(chat.composer) then
    vim.api.nvim_set_current_win(chat.composer)
  end
end

local function map(bufnr, modes, lhs, rhs, desc)
  vim.keymap.set(modes, lhs, rhs, { buffer = bufnr, nowait = true, silent = true, desc = desc })
end

local function composer(cid)
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(bufnr, "openvaala-composer://" .. cid)
  vim.bo[bufnr].filetype = "markdown"
  vim.bo[bufnr].bufhidden = "wipe"
  vim.b[bufnr].openvaala_cid = cid
  local send = function(mode)
    return function()
      M.submit(cid, mode)
    end
  end
  map(bufnr, { "n", "i" }, "<C-s>", send("queue"), "OpenVaala: send (queue)")
  map(bufnr, "n", "<CR>", send("queue"), "OpenVaala: send (queue)")
  map(bufnr, { "n", "i" }, "<M-s>", send("steer"), "OpenVaala: steer the running turn")
  map(bufnr, { "n", "i" }, "<M-j>", send("jump"), "OpenVaala: interrupt and send")
  map(bufnr, "n", "<C-c>", function()
    ov.interrupt(nil, cid)
  end, "OpenVaala: interrupt")
  map(bufnr, "n", "q", function()
    M.close(cid)
  end, "OpenVaala: close the chat")
  return bufnr
end

--- Open (or focus) the chat of a conversation; returns its windows and composer buffer.
function M.open(cid)
  local chat = M.chats[cid]
  if chat and valid(chat.transcript) and valid(chat.composer) then
    vim.api.nvim_set_current_win(chat.composer)
    return chat
  end
  M.close(cid)
  ov.state.current = cid
  vim.cmd("botright vsplit")
  vim.cmd.edit(vim.fn.fnameescape("openvaala://conversation/" .. cid))
  local transcript = vim.api.nvim_get_current_win()
  map(vim.api.nvim_get_current_buf(), "n", "q", function()
    M.close(cid)
  end, "OpenVaala: close the chat")
  vim.cmd("belowright split")
  local bufnr = composer(cid)
  vim.api.nvim_win_set_buf(0, bufnr)
  vim.api.nvim_win_set_height(0, ov.config.composer_height)
  chat = { transcript = transcript, composer = vim.api.nvim_get_current_win(), buf = bufnr }
  M.chats[cid] = chat
  return chat
end

--- A context block for lines l1..l2 of a buffer: the file path (relative to the cwd, or with ~)
--- and the line range go with the code.
function M.context(bufnr, l1, l2)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local path = name ~= "" and vim.fn.fnamemodify(name, ":~:.") or "[No Name]"
  local lines = vim.api.nvim_buf_get_lines(bufnr, l1 - 1, l2, false)
  local fence = "```"
  for _, line in ipairs(lines) do -- a longer fence than any inside the code
    local ticks = line:match("^%s*(`+)")
    if ticks and #ticks >= #fence then
      fence = string.rep("`", #ticks + 1)
    end
  end
  local where = l1 == 1 and l2 == vim.api.nvim_buf_line_count(bufnr) and path
    or string.format("%s:%d-%d", path, l1, l2)
  local out = { "`" .. where .. "`", fence .. (vim.bo[bufnr].filetype or "") }
  vim.list_extend(out, lines)
  table.insert(out, fence)
  return table.concat(out, "\n")
end

function M.setup(module)
  ov = module
end

return M
