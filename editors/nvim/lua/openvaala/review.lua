-- Edit review: an approval of a write or patch carries the files' proposed diffs
-- (`diffs` of approval/requested, docs/protocol.md); it opens in a tab of its own (the user's
-- windows stay as they were) as a Neovim diff: the file as it is on the left, as it would be on
-- the right.
--
--   ga accept (allow once)    gA allow for this conversation    gr reject (deny)
--   ]f / [f the next / previous file of the change               q close (the approval stays
--                                                                  pending: :OpenVaalaApprovals)

local M = {}

M.tabs = {} -- approvalId -> tabpage showing it

local function scratch(name, text, path)
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(bufnr, name)
  local lines = vim.split(text or "", "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines)
  end
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].bufhidden = "wipe"
  vim.bo[bufnr].modifiable = false
  local ft = path and vim.filetype.match({ filename = path, buf = bufnr })
  if ft then
    vim.bo[bufnr].filetype = ft
  end
  return bufnr
end

--- Close the review of one approval (answered here or elsewhere).
function M.close(approval_id)
  local tab = M.tabs[approval_id]
  M.tabs[approval_id] = nil
  if tab and vim.api.nvim_tabpage_is_valid(tab) and #vim.api.nvim_list_tabpages() > 1 then
    vim.cmd.tabclose(vim.api.nvim_tabpage_get_number(tab))
  end
end

-- Show file `i` of the change in the tab's two windows (or the unified diff alone, when the
-- texts were too large to send).
local function show(request, i, left, right)
  local diff = request.diffs[i]
  local tag = string.format("openvaala-review://%s/%d/", request.approvalId, i)
  local function text(value) -- JSON null arrives as vim.NIL
    return value ~= vim.NIL and value or nil
  end
  local old, new = text(diff.oldText), text(diff.newText)
  vim.cmd("diffoff!")
  if old == nil and new == nil then
    vim.api.nvim_win_set_buf(left, scratch(tag .. "unified", diff.unified, "x.diff"))
    vim.api.nvim_win_set_buf(right, scratch(tag .. "note", "(the file is too large to show whole)"))
    return
  end
  -- An added file has no old text, a deleted one no new text: that side is empty.
  vim.api.nvim_win_set_buf(left, scratch(tag .. "before/" .. diff.path, old or "", diff.path))
  vim.api.nvim_win_set_buf(right, scratch(tag .. "after/" .. diff.path, new or "", diff.path))
  for _, win in ipairs({ left, right }) do
    vim.api.nvim_win_call(win, function()
      vim.cmd("diffthis")
    end)
  end
end

--- Open the review of `request`; `respond(decision)` answers it (approvals.lua).
function M.open(request, decisions, respond)
  if M.tabs[request.approvalId] and vim.api.nvim_tabpage_is_valid(M.tabs[request.approvalId]) then
    return vim.api.nvim_set_current_tabpage(M.tabs[request.approvalId])
  end
  vim.cmd("tabnew")
  local tab = vim.api.nvim_get_current_tabpage()
  M.tabs[request.approvalId] = tab
  local left = vim.api.nvim_get_current_win()
  vim.cmd("rightbelow vsplit")
  local right = vim.api.nvim_get_current_win()
  local index = 1
  local keys -- set on each shown file's buffers
  local function go(step)
    if #request.diffs < 2 then -- one file: it is already shown (showing it again clashes names)
      return
    end
    index = (index - 1 + step) % #request.diffs + 1
    show(request, index, left, right)
    keys()
  end
  keys = function()
    for _, win in ipairs({ left, right }) do
      local bufnr = vim.api.nvim_win_get_buf(win)
      local function map(lhs, rhs, desc)
        vim.keymap.set("n", lhs, rhs, { buffer = bufnr, nowait = true, silent = true, desc = "OpenVaala: " .. desc })
      end
      map("ga", function()
        respond("allow")
      end, "accept the change")
      if decisions.allow_conversation then
        map("gA", function()
          respond("allow_conversation")
        end, "allow for this conversation")
      end
      map("gr", function()
        respond("deny")
      end, "reject the change")
      map("]f", function()
        go(1)
      end, "next file")
      map("[f", function()
        go(-1)
      end, "previous file")
      map("q", function()
        M.close(request.approvalId)
      end, "close (answer later)")
    end
  end
  show(request, index, left, right)
  keys()
  vim.api.nvim_set_current_win(right)
  vim.notify(
    "OpenVaala: " .. (request.text or "review the change") .. "\nga accept · gr reject · q later",
    vim.log.levels.INFO
  )
end

return M
