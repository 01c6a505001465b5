-- The read-only transcript buffers `openvaala://conversation/<id>[/session/<id>]`, drawn from
-- `openvaala/render` and redrawn when the bridge says they changed, with the bridge's code lenses
-- ("Fork here", "Rewind here", "Follow": run them with vim.lsp.codelens.run()).

local M = {}
local ov -- the openvaala module (set in setup)

local PATTERN = "^openvaala://conversation/(%x+)"

function M.conversation_of(bufnr)
  bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
  return vim.b[bufnr].openvaala_cid or vim.api.nvim_buf_get_name(bufnr):match(PATTERN)
end

--- The subagent session a transcript buffer shows (`…/session/<id>`), or nil for the root's.
function M.session_of(bufnr)
  bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
  return vim.api.nvim_buf_get_name(bufnr):match("^openvaala://conversation/%x+/session/(%x+)")
end

local diff = (vim.text and vim.text.diff) or vim.diff

--- Replace the buffer's lines with `lines`, touching only the hunks that changed (a streamed
--- reply changes a few lines at the end and the usage line: the rest is not redrawn).
function M.patch(bufnr, lines)
  local old = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  if #old == 0 or (#old == 1 and old[1] == "") then
    return vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  end
  local a = table.concat(old, "\n") .. "\n"
  local b = table.concat(lines, "\n") .. "\n"
  if a == b then
    return
  end
  local hunks = diff(a, b, { result_type = "indices", algorithm = "myers" })
  -- Last hunk first, so earlier line numbers stay right.
  for i = #hunks, 1, -1 do
    local start_a, count_a, start_b, count_b = unpack(hunks[i])
    local first = count_a == 0 and start_a or start_a - 1
    local new = vim.list_slice(lines, start_b, start_b + count_b - 1)
    vim.api.nvim_buf_set_lines(bufnr, first, first + count_a, false, new)
  end
end

local lens_timers = {} -- bufnr -> pending lens refresh

--- Code lenses follow the transcript at most every LENS_DELAY_MS: a streamed reply redraws many
--- times a second, and each lens refresh costs a request and a redraw of every lens.
local LENS_DELAY_MS = 300
function M.refresh_lenses(bufnr)
  if lens_timers[bufnr] then
    return
  end
  lens_timers[bufnr] = true
  vim.defer_fn(function()
    lens_timers[bufnr] = nil
    if vim.api.nvim_buf_is_valid(bufnr) then
      vim.lsp.codelens.refresh({ bufnr = bufnr })
    end
  end, LENS_DELAY_MS)
end

-- Draw the bridge's answer: line edits from the version shown, or the whole text (patched in
-- by diff hunks, so unchanged lines are not touched either way).
local function draw(bufnr, result)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  local follow = false
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    follow = follow or vim.api.nvim_win_get_cursor(win)[1] >= vim.api.nvim_buf_line_count(bufnr)
  end
  vim.bo[bufnr].modifiable = true
  if result.edits then
    for _, edit in ipairs(result.edits) do -- last first: line numbers stay right
      vim.api.nvim_buf_set_lines(bufnr, edit.start, edit["end"], false, edit.lines)
    end
  else
    local lines = vim.split(result.text, "\n", { plain = true })
    if lines[#lines] == "" then
      table.remove(lines)
    end
    M.patch(bufnr, lines)
  end
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].modified = false
  vim.b[bufnr].openvaala_version = result.version
  if follow then -- keep the end in view while the reply streams
    local last = vim.api.nvim_buf_line_count(bufnr)
    for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
      vim.api.nvim_win_set_cursor(win, { last, 0 })
    end
  end
  M.refresh_lenses(bufnr)
end

local inflight = {} -- bufnr -> true while a render request is out; "again" if asked meanwhile

function M.render(bufnr, full)
  -- One request at a time per buffer: overlapping ones would each start from a version the
  -- other replaces, and the bridge would have to send the whole text.
  if inflight[bufnr] then
    inflight[bufnr] = "again"
    return
  end
  inflight[bufnr] = true
  local uri = vim.api.nvim_buf_get_name(bufnr)
  local since = not full and vim.b[bufnr].openvaala_version or nil
  ov.request("openvaala/render", { uri = uri, since = since }, function(err, result)
    local again = inflight[bufnr] == "again"
    inflight[bufnr] = nil
    if err or not vim.api.nvim_buf_is_valid(bufnr) then
      return
    end
    if result.edits and result.since ~= vim.b[bufnr].openvaala_version then
      return M.render(bufnr, true) -- edits from a version this buffer no longer shows
    end
    draw(bufnr, result)
    if again then
      M.render(bufnr)
    end
  end)
end

function M.refresh(uri)
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.api.nvim_buf_get_name(bufnr) == uri then
      M.render(bufnr)
    end
  end
end

local function open(args)
  local bufnr = args.buf
  vim.bo[bufnr].buftype = "nofile"
  vim.bo[bufnr].bufhidden = "hide"
  vim.bo[bufnr].swapfile = false
  vim.bo[bufnr].filetype = "markdown"
  vim.bo[bufnr].modifiable = false
  local cid = M.conversation_of(bufnr)
  ov.state.current = cid
  local client = ov.client()
  if client then
    vim.lsp.buf_attach_client(bufnr, client.id) -- code lenses
  end
  ov.request("openvaala/subscribe", { conversationId = cid }, function(err, result)
    if not err then
      ov.conversation_seen(cid, result.snapshot and result.snapshot.conversation)
      M.render(bufnr)
    end
  end)
end

function M.setup(module)
  ov = module
  local group = vim.api.nvim_create_augroup("openvaala", { clear = true })
  vim.api.nvim_create_autocmd("BufReadCmd", { group = group, pattern = "openvaala://*", callback = open })
end

return M
