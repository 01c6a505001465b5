-- Approvals: when an agent asks before a tool call, ask the user with vim.ui.select and answer
-- through the bridge's `openvaala.respondApproval` command.
--
-- The plugin tells the bridge (initializationOptions `approvals = "plugin"`) that it asks the user
-- itself, so the bridge sends no window/showMessageRequest of its own and nothing is asked twice.
-- The first answer from any client wins: a request answered elsewhere is dropped from `pending`,
-- and a late answer here is told in one short message.

local review = require("openvaala.review")

local M = {}
local ov -- the openvaala module (set in setup)

M.ALLOW = "Allow once"
M.ALLOW_CONVERSATION = "Allow for this conversation"
M.DENY = "Deny"
M.DENY_WITH_MESSAGE = "Deny with a message…"
M.CHOICES = { M.ALLOW, M.ALLOW_CONVERSATION, M.DENY, M.DENY_WITH_MESSAGE }

local DECISIONS = {
  [M.ALLOW] = "allow",
  [M.ALLOW_CONVERSATION] = "allow_conversation",
  [M.DENY] = "deny",
  [M.DENY_WITH_MESSAGE] = "deny",
}
local PAST = { allow = "allowed", allow_conversation = "allowed for this conversation", deny = "denied" }

M.pending = {} -- approvalId -> the $/openvaala/approvalRequested params, while unanswered

local function notify(msg, level)
  vim.notify("OpenVaala: " .. msg, level or vim.log.levels.INFO)
end

--- Answer one request: decision "allow", "allow_conversation" or "deny"; message optional.
function M.respond(request, decision, message, callback)
  local args = {
    conversationId = request.conversationId,
    approvalId = request.approvalId,
    decision = decision,
    message = message,
  }
  ov.command("openvaala.respondApproval", { args }, function(err, result)
    if err then
      local kind = type(err.data) == "table" and err.data.kind or nil
      if kind == "already_resolved" or kind == "not_found" then
        notify("that approval was already answered")
      else
        notify("answering the approval failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      end
    end
    if callback then
      callback(err, result)
    end
  end)
end

--- Ask the user about one request (vim.ui.select, then vim.ui.input for a deny message).
--- The choices for one request, and the decision of each: the bridge's answers ("allow for this
--- conversation" names exactly what it allows, and is absent when nothing can be granted).
function M.choices(request)
  if type(request.answers) ~= "table" then
    return M.CHOICES, DECISIONS
  end
  local choices, decisions = {}, { [M.DENY_WITH_MESSAGE] = "deny" }
  for _, answer in ipairs(request.answers) do
    table.insert(choices, answer.title)
    decisions[answer.title] = answer.decision
  end
  table.insert(choices, M.DENY_WITH_MESSAGE)
  return choices, decisions
end

function M.ask(request)
  local choices, decisions = M.choices(request)
  vim.ui.select(choices, { prompt = request.text or "OpenVaala: approve?", kind = "openvaala.approval" }, function(choice)
    if not choice then -- dismissed: it stays pending, answerable later (:OpenVaalaApprovals)
      return
    end
    if not M.pending[request.approvalId] then
      return notify("that approval was already answered")
    end
    if choice ~= M.DENY_WITH_MESSAGE then
      return M.respond(request, decisions[choice])
    end
    vim.ui.input({ prompt = "Message to the agent: " }, function(text)
      if text == nil then -- cancelled: still pending
        return
      end
      M.respond(request, "deny", text ~= "" and text or nil)
    end)
  end)
end

--- A write or patch (a request with `diffs`) is reviewed in a diff tab (review.lua), answered
--- with its keys; any other request is asked with vim.ui.select.
function M.present(request)
  if type(request.diffs) == "table" and #request.diffs > 0 then
    local _, decisions = M.choices(request)
    local allowed = {}
    for _, decision in pairs(decisions) do
      allowed[decision] = true
    end
    return review.open(request, allowed, function(decision)
      if not M.pending[request.approvalId] then
        review.close(request.approvalId)
        return notify("that approval was already answered")
      end
      M.respond(request, decision, nil, function(err)
        if not err then
          review.close(request.approvalId)
        end
      end)
    end)
  end
  M.ask(request)
end

function M.on_requested(_, request)
  M.pending[request.approvalId] = request
  if ov.config.on_approval then
    return ov.config.on_approval(request)
  end
  vim.schedule(function()
    M.present(request)
  end)
end

function M.on_resolved(_, resolved)
  local request = M.pending[resolved.approvalId]
  M.pending[resolved.approvalId] = nil
  review.close(resolved.approvalId) -- answered (here or in another client): the review goes
  vim.cmd("redrawstatus")
  if request and resolved.decision then
    notify((request.agent or "agent") .. ": " .. (request.summary or "tool call") .. " — " .. PAST[resolved.decision])
  end
end

--- How many requests of a conversation wait for an answer.
function M.count(cid)
  local n = 0
  for _, request in pairs(M.pending) do
    if request.conversationId == cid then
      n = n + 1
    end
  end
  return n
end

--- Pick one of the pending requests and ask about it again (after dismissing it).
function M.pick()
  local waiting = vim.tbl_values(M.pending)
  if #waiting == 0 then
    return notify("no approval is waiting")
  end
  if #waiting == 1 then
    return M.present(waiting[1])
  end
  vim.ui.select(waiting, {
    prompt = "Approval:",
    format_item = function(r)
      return (r.agent or "agent") .. ": " .. (r.summary or r.tool or "")
    end,
  }, function(request)
    if request then
      M.present(request)
    end
  end)
end

function M.setup(module)
  ov = module
end

return M
