-- The chat sidebar: ONE window pair, the transcript on the right (the windows you had are kept)
-- and a multi-line composer below it. Opening another conversation — :OpenVaalaNew, the picker,
-- fork, "Fork here", follow, rewind — switches the pair in place; it never adds a split and never
-- takes over one of your windows.
--
-- Each conversation has its own composer buffer, hidden (never wiped) while another conversation
-- is on screen, so a draft waits where you left it. A composer sends to its own conversation, and
-- the pair always shows a conversation with its own composer: what you type goes to the
-- conversation on screen.
--
--   composer:   <C-s> (normal/insert) or <CR> (normal) send, queued after the running turn
--               <M-s> steer the running turn, <M-j> interrupt it and send, <C-c> interrupt
--   both:       q closes the sidebar (its buffers, and so the drafts, stay loaded)

local M = {}
local ov -- the openvaala module (set in setup)

M.pair = nil -- { transcript = win, composer = win } while the sidebar is open
M.composers = {} -- cid -> composer bufnr, kept while hidden

local CONVERSATION = "^openvaala://conversation/(%x+)"

local function valid(win)
  return win and vim.api.nvim_win_is_valid(win)
end

local function map(bufnr, modes, lhs, rhs, desc)
  vim.keymap.set(modes, lhs, rhs, { buffer = bufnr, nowait = true, silent = true, desc = desc })
end

--- The conversation on screen in the sidebar, or nil when it is closed.
function M.shown()
  local pair = M.pair
  if not pair or not valid(pair.composer) then
    return nil
  end
  return vim.b[vim.api.nvim_win_get_buf(pair.composer)].openvaala_cid
end

--- The sidebar of `cid` ({transcript, composer, buf}) when that conversation is on screen.
function M.chat(cid)
  if cid == nil or M.shown() ~= cid or not valid(M.pair.transcript) then
    return nil
  end
  return { transcript = M.pair.transcript, composer = M.pair.composer, buf = M.composers[cid] }
end

function M.close()
  local pair = M.pair
  M.pair = nil
  for _, win in ipairs(pair and { pair.composer, pair.transcript } or {}) do
    if valid(win) and #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(win, true) -- the buffers stay (bufhidden=hide)
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
  local bufnr = M.composers[cid]
  if not bufnr or not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  local text = M.text(bufnr)
  if not text then
    return vim.notify("OpenVaala: the composer is empty", vim.log.levels.WARN)
  end
  if not ov.client() then -- no bridge: nothing sent, and the text stays where it is
    return vim.notify("OpenVaala: could not start `openvaala lsp`; not sent", vim.log.levels.ERROR)
  end
  local kept = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, {})
  ov.send(text, mode, function(err)
    if err and vim.api.nvim_buf_is_valid(bufnr) then
      -- Not sent: the text comes back, before whatever was typed since (kept too).
      local back = vim.list_extend({}, kept)
      if M.text(bufnr) then
        vim.list_extend(back, { "" })
        vim.list_extend(back, vim.api.nvim_buf_get_lines(bufnr, 0, -1, false))
      end
      vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, back)
    end
  end, cid)
end

--- The composer buffer of a conversation, made on first use and kept from then on.
function M.composer(cid)
  local bufnr = M.composers[cid]
  if bufnr and vim.api.nvim_buf_is_valid(bufnr) then
    return bufnr
  end
  bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(bufnr, "openvaala-composer://" .. cid)
  vim.bo[bufnr].filetype = "markdown"
  vim.bo[bufnr].bufhidden = "hide" -- a hidden draft is kept (docs/editors.md, "The chat")
  vim.b[bufnr].openvaala_cid = cid
  vim.bo[bufnr].omnifunc = "v:lua.require'openvaala.mcp'.complete" -- /mcp__ prompts
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
  map(bufnr, "n", "q", M.close, "OpenVaala: close the chat")
  M.composers[cid] = bufnr
  return bufnr
end

-- The pair's windows, made where missing: the transcript as a vertical split on the far right,
-- the composer below it. An existing window of the pair is reused as it is.
local function ensure_pair()
  local pair = M.pair or {}
  if valid(pair.transcript) and valid(pair.composer) then
    return pair
  end
  if valid(pair.composer) then
    vim.api.nvim_set_current_win(pair.composer)
    vim.cmd("aboveleft split")
    pair.transcript = vim.api.nvim_get_current_win()
  elseif valid(pair.transcript) then
    vim.api.nvim_set_current_win(pair.transcript)
    vim.cmd("belowright split")
    pair.composer = vim.api.nvim_get_current_win()
  else
    vim.cmd("botright vsplit")
    pair.transcript = vim.api.nvim_get_current_win()
    vim.cmd("belowright split")
    pair.composer = vim.api.nvim_get_current_win()
  end
  vim.api.nvim_win_set_height(pair.composer, ov.config.composer_height)
  M.pair = pair
  return pair
end

--- Show a transcript (`openvaala://conversation/<id>[/session/<id>]`) in the sidebar, with the
--- composer of its conversation below; opts.focus = "composer" (default) or "transcript",
--- opts.line = a 0-based line to put the cursor on. Returns the sidebar's chat record.
function M.show(uri, opts)
  opts = opts or {}
  local cid = uri:match(CONVERSATION)
  local from = vim.api.nvim_get_current_win()
  local pair = ensure_pair()
  local loaded = vim.fn.bufnr(uri)
  if loaded ~= -1 and vim.api.nvim_buf_is_loaded(loaded) then
    vim.api.nvim_win_set_buf(pair.transcript, loaded)
  else
    vim.api.nvim_win_call(pair.transcript, function()
      vim.cmd("keepalt edit " .. vim.fn.fnameescape(uri))
    end)
  end
  local tbuf = vim.api.nvim_win_get_buf(pair.transcript)
  map(tbuf, "n", "q", M.close, "OpenVaala: close the chat")
  vim.api.nvim_win_set_buf(pair.composer, M.composer(cid))
  ov.state.current = cid
  if opts.line then
    vim.wait(5000, function()
      return vim.api.nvim_buf_line_count(tbuf) > opts.line
    end, 20)
    local last = vim.api.nvim_buf_line_count(tbuf)
    vim.api.nvim_win_set_cursor(pair.transcript, { math.min(opts.line + 1, last), 0 })
  end
  local focus = opts.focus == "transcript" and pair.transcript or pair.composer
  vim.api.nvim_set_current_win(valid(focus) and focus or from)
  return M.chat(cid)
end

--- Open (or focus) the chat of a conversation in the sidebar.
function M.open(cid)
  return M.show("openvaala://conversation/" .. cid)
end

--- window/showDocument for a transcript: into the sidebar, not the current window.
function M.on_show_document(params)
  local line = params.selection and params.selection.start and params.selection.start.line
  M.show(params.uri, { focus = params.takeFocus and "transcript" or nil, line = line })
  return { success = true }
end

--- Whether a URI is a transcript (shown in the sidebar).
function M.is_transcript(uri)
  return type(uri) == "string" and uri:match(CONVERSATION) ~= nil
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
  -- A transcript shown in the sidebar's transcript window by any way (<C-o>, :buffer, the
  -- alternate file) brings its conversation's composer below: the composer on screen always
  -- sends to the conversation on screen.
  vim.api.nvim_create_autocmd("BufWinEnter", {
    group = vim.api.nvim_create_augroup("openvaala_chat_pair", { clear = true }),
    pattern = "openvaala://conversation/*",
    callback = function(args)
      local pair = M.pair
      local cid = args.match:match(CONVERSATION)
      if not cid or not pair or not valid(pair.transcript) or not valid(pair.composer) then
        return
      end
      if vim.api.nvim_win_get_buf(pair.transcript) ~= args.buf then
        return
      end
      if vim.api.nvim_win_get_buf(pair.composer) ~= M.composer(cid) then
        vim.api.nvim_win_set_buf(pair.composer, M.composer(cid))
      end
      ov.state.current = cid
    end,
  })
end

return M
