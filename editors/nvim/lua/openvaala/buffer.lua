-- The read-only transcript buffers `openvaala://conversation/<id>[/session/<id>]`, drawn from
-- `openvaala/render` and redrawn when the bridge says they changed, with the bridge's code lenses
-- ("Fork here", "Rewind here", "Follow": run them with vim.lsp.codelens.run()).

local M = {}
local ov -- the openvaala module (set in setup)

local PATTERN = "^openvaala://conversation/(%x+)"

function M.conversation_of(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr)
  return name:match(PATTERN)
end

local function draw(bufnr, text)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines)
  end
  local follow = false
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    follow = follow or vim.api.nvim_win_get_cursor(win)[1] >= vim.api.nvim_buf_line_count(bufnr)
  end
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].modified = false
  if follow then -- keep the end in view while the reply streams
    for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
      vim.api.nvim_win_set_cursor(win, { #lines, 0 })
    end
  end
  vim.lsp.codelens.refresh({ bufnr = bufnr })
end

function M.render(bufnr)
  local uri = vim.api.nvim_buf_get_name(bufnr)
  ov.request("openvaala/render", { uri = uri }, function(err, result)
    if not err then
      draw(bufnr, result.text)
      vim.b[bufnr].openvaala_version = result.version
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
  ov.request("openvaala/subscribe", { conversationId = cid }, function(err)
    if not err then
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
