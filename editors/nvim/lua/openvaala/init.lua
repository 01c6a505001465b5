-- OpenVaala for Neovim: a thin client of `openvaala lsp` (the editor bridge).
--
--   require("openvaala").setup({})           -- then :OpenVaalaNew, :OpenVaalaSend hello, …
--   vim.o.statusline = "%f %= %{v:lua.require'openvaala'.statusline()}"
--
-- Everything is a request to the bridge; the only state kept here is what the UI shows: the
-- current conversation, the latest streamed reply, the usage report and the waiting inputs.

local approvals = require("openvaala.approvals")
local buffer = require("openvaala.buffer")
local chat = require("openvaala.chat")
local mcp = require("openvaala.mcp")

local M = {}

M.config = {
  cmd = { "openvaala", "lsp" },
  cmd_env = nil,
  -- Called with every forwarded daemon event: function(event) end ({conversationId, seq, method, params}).
  on_event = nil,
  -- Called with the text a rewind gives back; the default asks for it in vim.ui.input.
  on_composer = nil,
  -- Called with each approval request ($/openvaala/approvalRequested) instead of asking with
  -- vim.ui.select; answer with require("openvaala.approvals").respond(request, decision, message).
  on_approval = nil,
  -- Height of the composer window below the transcript in the chat layout.
  composer_height = 8,
}

M.state = {
  client_id = nil,
  current = nil, -- conversation id
  replies = {}, -- cid -> text of the latest agent message (streamed)
  reply_item = {}, -- cid -> itemId of that message
  usage = {}, -- cid -> usage report of the root agent ($/openvaala/usage)
  session_usage = {}, -- sessionId -> usage report of that agent (root or subagent)
  status = {}, -- cid -> root status ("running", "awaiting_approval", "idle", …)
  inbox = {}, -- cid -> waiting inputs of the root agent
  -- cid -> {mode, allowed}: the permission mode the daemon announced and those the agent allows
  modes = {},
  events = 0,
}

local function notify(msg, level)
  vim.notify("OpenVaala: " .. msg, level or vim.log.levels.INFO)
end

--- Keep the permission mode a conversation's info carries (a snapshot, `conversation/updated`):
--- the statusline shows the mode in force, whichever client switched it.
function M.conversation_seen(cid, conversation)
  if type(conversation) == "table" and type(conversation.permissionMode) == "string" then
    local allowed = type(conversation.permissionModes) == "table" and conversation.permissionModes or nil
    local known = M.state.modes[cid]
    M.state.modes[cid] = { mode = conversation.permissionMode, allowed = allowed or (known and known.allowed) or {} }
    vim.schedule(function()
      vim.cmd("redrawstatus")
    end)
  end
end

local function on_event(_, event)
  local state, cid, p = M.state, event.conversationId, event.params or {}
  state.events = state.events + 1
  if event.method == "item/started" and p.item and p.item.type == "agent_message" then
    state.reply_item[cid] = p.item.itemId
    state.replies[cid] = p.item.text or ""
  elseif event.method == "item/delta" and p.itemId == state.reply_item[cid] then
    state.replies[cid] = (state.replies[cid] or "") .. (p.delta or "")
  elseif event.method == "item/completed" and p.item and p.item.type == "agent_message" then
    state.replies[cid] = p.item.text or state.replies[cid]
  elseif event.method == "conversation/updated" and p.conversation then
    state.status[cid] = p.conversation.status
    M.conversation_seen(cid, p.conversation)
  elseif event.method == "conversation/snapshot" and p.snapshot then
    -- A redraw from scratch (e.g. a new daemon after a crash): its status replaces a stale one.
    state.status[cid] = p.snapshot.conversation and p.snapshot.conversation.status or nil
    M.conversation_seen(cid, p.snapshot.conversation)
  elseif event.method == "inbox/updated" then
    state.inbox[cid] = p.inputs or {}
  end
  if M.config.on_event then
    M.config.on_event(event)
  end
  vim.api.nvim_exec_autocmds("User", { pattern = "OpenVaalaEvent", data = event, modeline = false })
end

local function on_usage(_, report)
  if report.root then
    M.state.usage[report.conversationId] = report
  end
  M.state.session_usage[report.sessionId] = report -- a subagent's transcript shows its own
  vim.cmd("redrawstatus")
end

local function on_composer(_, params)
  if M.config.on_composer then
    return M.config.on_composer(params)
  end
  M.state.current = params.conversationId
  -- The rewound message goes back into the composer as it was (every line, code blocks too).
  vim.schedule(function()
    chat.compose(params.conversationId, params.text, true)
  end)
end

local handlers = {
  ["$/openvaala/event"] = on_event,
  ["$/openvaala/usage"] = on_usage,
  ["$/openvaala/refresh"] = function(_, params)
    buffer.refresh(params.uri)
  end,
  ["$/openvaala/composer"] = on_composer,
  -- Fork, "Fork here", follow and rewind show their transcript in the chat sidebar, switched in
  -- place (docs/editors.md, "The chat"); any other document opens as Neovim would open it.
  ["window/showDocument"] = function(err, params, ctx, config)
    if chat.is_transcript(params.uri) and not params.external then
      return chat.on_show_document(params)
    end
    return vim.lsp.handlers["window/showDocument"](err, params, ctx, config)
  end,
  ["$/openvaala/approvalRequested"] = approvals.on_requested,
  ["$/openvaala/approvalResolved"] = approvals.on_resolved,
  ["$/openvaala/connection"] = function(_, params)
    M.state.connection = params.state
    if params.state == "reconnecting" then
      -- The running marks stay: a daemon reached again over ssh may never have stopped the
      -- turn; `connected` names the conversations whose turn goes on.
      notify("connection to the daemon lost, reconnecting…", vim.log.levels.WARN)
    elseif params.state == "connected" then
      local running = {}
      for _, cid in ipairs(params.running or {}) do
        running[cid] = true
      end
      for cid, status in pairs(M.state.status) do
        if (status == "running" or status == "awaiting_approval") and not running[cid] then
          M.state.status[cid] = "idle"
        end
      end
      for cid in pairs(running) do
        if M.state.status[cid] ~= "awaiting_approval" then
          M.state.status[cid] = "running"
        end
      end
      notify("reconnected to the daemon" .. (params.restarted and " (a new one was started)" or ""))
    elseif params.state == "disconnected" then
      -- No daemon: nothing runs for this editor.
      M.state.status = {}
      notify("the daemon is gone: " .. (params.message or "") .. " — start it with `openvaala serve start`", vim.log.levels.ERROR)
    end
    vim.cmd("redrawstatus")
  end,
}

--- The bridge's client, started on first use.
function M.client()
  local id = M.state.client_id
  local client = id and vim.lsp.get_client_by_id(id)
  if client and not client:is_stopped() then
    return client
  end
  id = vim.lsp.start({
    name = "openvaala",
    cmd = M.config.cmd,
    cmd_env = M.config.cmd_env,
    root_dir = vim.fn.getcwd(),
    handlers = handlers,
    -- The plugin asks about approvals itself (vim.ui.select): no showMessageRequest as well.
    init_options = { approvals = "plugin" },
  }, { attach = false })
  M.state.client_id = id
  return id and vim.lsp.get_client_by_id(id)
end

--- An async request to the bridge: callback(err, result).
function M.request(method, params, callback)
  local client = M.client()
  if not client then
    return notify("could not start `openvaala lsp`", vim.log.levels.ERROR)
  end
  client:request(method, params or vim.empty_dict(), function(err, result)
    if err then
      notify(method .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    if callback then
      callback(err, result)
    end
  end)
end

local function current(cid)
  cid = cid or buffer.conversation_of(0) or M.state.current
  if not cid then
    notify("no conversation: :OpenVaalaNew or :OpenVaalaList first", vim.log.levels.WARN)
  end
  return cid
end

function M.new_conversation(cwd, callback)
  local params = cwd and cwd ~= "" and { cwd = cwd } or vim.empty_dict()
  M.request("openvaala/conversations/new", params, function(err, result)
    if not err then
      M.state.current = result.conversation.conversationId
    end
    if callback then
      callback(err, result)
    end
  end)
end

--- Open a conversation in the chat sidebar (transcript, composer below), switched in place.
function M.open(cid)
  M.request("openvaala/subscribe", { conversationId = cid }, function(err)
    if not err then
      chat.open(cid)
    end
  end)
end

--- A directory argument as an absolute path: relative to Neovim's cwd, `~` expanded.
function M.resolve_dir(arg)
  if not arg or arg == "" then
    return nil
  end
  local path = vim.fn.fnamemodify(vim.fn.expand(arg), ":p"):gsub("(.)/$", "%1")
  if vim.fn.isdirectory(path) == 0 then
    return nil, "not a directory: " .. arg
  end
  return path
end

--- A request that changes one of the conversation's settings: `said` once it is done.
local function set_setting(method, params, said, callback)
  M.request(method, params, function(err, result)
    if not err then
      notify(said)
    end
    if callback then
      callback(err, result)
    end
  end)
end

--- Choose the conversation's agent (e.g. when its own is not configured here): `name`, or one
--- picked with vim.ui.select among the configured agents. callback(err, {}).
function M.set_agent(name, cid, callback)
  cid = current(cid)
  if not cid then
    return
  end
  local function set(agent)
    set_setting("openvaala/setAgent", { conversationId = cid, agent = agent }, "agent: " .. agent, callback)
  end
  if name and name ~= "" then
    return set(name)
  end
  M.request("openvaala/agents", vim.empty_dict(), function(err, result)
    if err then
      return
    end
    vim.ui.select(result.agents, {
      prompt = "Agent:",
      format_item = function(a)
        return a.name .. ((a.description or "") ~= "" and (" — " .. a.description) or "")
      end,
    }, function(a)
      if a then
        set(a.name)
      end
    end)
  end)
end

local MODES = { "plan", "ask", "auto-edit" } -- narrowest first (docs/security.md)

--- The modes the conversation's agent allows (all three until the daemon said).
local function allowed_modes(cid)
  local known = cid and M.state.modes[cid]
  return known and #known.allowed > 0 and known.allowed or MODES
end

--- The permission mode in force in `cid` (nil until the daemon announced it).
function M.permission_mode(cid)
  local known = cid and M.state.modes[cid]
  return known and known.mode or nil
end

--- Switch the conversation's permission mode: `plan` (read-only), `ask` (every write asks) or
--- `auto-edit` (the agent's configuration); without one, picked from those the agent allows.
--- The statusline changes when the daemon announces it. callback(err, {}).
function M.set_permission_mode(mode, cid, callback)
  cid = current(cid)
  if not cid then
    return
  end
  local function set(chosen)
    local params = { conversationId = cid, mode = chosen }
    set_setting("openvaala/setPermissionMode", params, "permission mode: " .. chosen, callback)
  end
  if mode and mode ~= "" then
    return set(mode)
  end
  vim.ui.select(allowed_modes(cid), { prompt = "Permission mode:" }, function(chosen)
    if chosen then
      set(chosen)
    end
  end)
end

--- Point the conversation at another working directory (e.g. after a move): `dir` relative to
--- Neovim's cwd or with `~`, by default Neovim's cwd. callback(err, {}).
function M.set_cwd(dir, cid, callback)
  cid = current(cid)
  if not cid then
    return
  end
  local path, problem = M.resolve_dir((dir and dir ~= "") and dir or vim.fn.getcwd())
  if problem then
    return notify(problem, vim.log.levels.ERROR)
  end
  M.request("openvaala/setCwd", { conversationId = cid, cwd = path }, function(err, result)
    if not err then
      notify("working directory: " .. path)
    end
    if callback then
      callback(err, result)
    end
  end)
end

-- The agents the bridge last named: a completion asked while the machine is too busy to answer
-- within its wait offers these rather than nothing.
local last_agents = nil

--- The configured agents' names, for completing :OpenVaalaAgent.
local function agent_names()
  local client = M.client()
  local answer = client and client:request_sync("openvaala/agents", vim.empty_dict(), 8000)
  local agents = answer and answer.result and answer.result.agents
  if agents then
    last_agents = agents
  end
  local names = {}
  for _, a in ipairs(agents or last_agents or {}) do
    table.insert(names, a.name)
  end
  return names
end

--- Send a message (mode "queue", "steer" or "jump"); callback(err, {inputId, disposition}).
function M.send(text, mode, callback, cid)
  cid = current(cid)
  if not cid then
    return
  end
  -- An MCP prompt or resource mention becomes the message first; refused, nothing is sent.
  mcp.expand(text, function(err, message)
    if err then
      return callback and callback(err)
    end
    M.state.replies[cid] = nil
    M.request("openvaala/send", { conversationId = cid, text = message, mode = mode or "queue" }, callback)
  end)
end

--- Send and wait for the turn: callback(err, {turnId, status, usage}).
function M.prompt(text, mode, callback, cid)
  cid = current(cid)
  if not cid then
    return
  end
  M.state.replies[cid] = nil
  M.request("openvaala/prompt", { conversationId = cid, text = text, mode = mode or "queue" }, callback)
end

local function simple(method)
  return function(callback, cid)
    cid = current(cid)
    if cid then
      M.request(method, { conversationId = cid }, callback)
    end
  end
end

M.interrupt = simple("openvaala/interrupt")
M.compact = simple("openvaala/compact")
M.usage = simple("openvaala/usage")
M.agents = simple("openvaala/agents")

--- Run a bridge command (opens what it creates, through window/showDocument).
function M.command(name, args, callback)
  local client = M.client()
  if client then
    client:exec_cmd({ title = name, command = name, arguments = args }, nil, callback)
  end
end

function M.fork(cid)
  cid = current(cid)
  if cid then
    M.command("openvaala.fork", { { conversationId = cid } })
  end
end

function M.rewind(cid)
  cid = current(cid)
  if not cid then
    return
  end
  M.request("openvaala/subscribe", { conversationId = cid }, function(err, result)
    if err then
      return
    end
    local choices = {}
    for _, item in ipairs(result.snapshot.sessions[1].items or {}) do
      if item.type == "user_message" and item.origin ~= "subagent" then
        table.insert(choices, item)
      end
    end
    vim.ui.select(choices, {
      prompt = "Rewind to before:",
      format_item = function(item)
        local lines = vim.split(item.text, "\n", { plain = true })
        local more = #lines > 1 and string.format("  (+%d lines)", #lines - 1) or ""
        return lines[1] .. more
      end,
    }, function(item)
      if item then
        M.command("openvaala.rewind", { { conversationId = cid, messageId = item.itemId } })
      end
    end)
  end)
end

function M.follow(cid)
  M.agents(function(err, tree)
    if err then
      return
    end
    local flat = {}
    local function walk(nodes, depth)
      for _, node in ipairs(nodes) do
        table.insert(flat, { node = node, depth = depth })
        walk(node.children or {}, depth + 1)
      end
    end
    walk(tree.sessions, 0)
    vim.ui.select(flat, {
      prompt = "Follow:",
      format_item = function(entry)
        return string.rep("  ", entry.depth) .. entry.node.agent .. " — " .. entry.node.status
      end,
    }, function(entry)
      if entry then
        chat.show(entry.node.uri, { focus = "transcript" })
      end
    end)
  end, cid)
end

--- One picker line: date, short id, the first words, and where it came from (fork or rewind).
function M.describe(c)
  local date = tostring(c.updatedAt or c.createdAt or ""):sub(1, 16):gsub("T", " ")
  local words = vim.split(vim.trim(c.title or ""), "%s+")
  local first = table.concat(vim.list_slice(words, 1, 8), " ")
  local origin = ""
  local from = c.forkedFrom
  if type(from) == "table" and from.conversationId then
    local kind = from.kind == "rewind" and "rewind" or "fork"
    origin = string.format("  [%s of %s]", kind, from.conversationId:sub(1, 8))
  end
  local status = c.status and c.status ~= "idle" and ("  (" .. c.status .. ")") or ""
  return string.format("%s  %s  %s%s%s", date, c.conversationId:sub(1, 8), first, origin, status)
end

function M.list()
  M.request("openvaala/conversations/list", vim.empty_dict(), function(err, result)
    if err then
      return
    end
    vim.ui.select(result.conversations, {
      prompt = "Conversation:",
      format_item = M.describe,
    }, function(c)
      if c then
        M.open(c.conversationId)
      end
    end)
  end)
end

--- Act on a waiting input: action is "edit", "withdraw", "steer" or "jump".
function M.input(action, cid)
  cid = current(cid)
  local waiting = cid and M.state.inbox[cid] or {}
  if #waiting == 0 then
    return notify("no input is waiting")
  end
  vim.ui.select(waiting, {
    prompt = action .. ":",
    format_item = function(i)
      return "(" .. i.mode .. ") " .. i.text
    end,
  }, function(i)
    if not i then
      return
    end
    if action == "edit" then
      vim.ui.input({ prompt = "Edit: ", default = i.text }, function(text)
        if text and text ~= "" then
          M.request("openvaala/input", { action = "edit", inputId = i.inputId, text = text })
        end
      end)
    else
      M.request("openvaala/input", { action = action, inputId = i.inputId })
    end
  end)
end

--- For the statusline: "OpenVaala 1.2k/32k (4%, reported)" for the current conversation (in a
--- subagent's transcript, that subagent's own usage).
function M.statusline()
  local cid = buffer.conversation_of(0) or M.state.current
  local sid = buffer.session_of(0)
  local report = sid and M.state.session_usage[sid] or (cid and M.state.usage[cid])
  local mode = M.permission_mode(cid)
  if not report and not mode then
    return ""
  end
  local status = M.state.status[cid]
  local running = (status == "running" or status == "awaiting_approval") and " ●" or ""
  local waiting = approvals.count(cid) > 0 and " ⚠ approval" or ""
  local shown = mode and (" [" .. mode .. "]") or ""
  return "OpenVaala" .. (report and (" " .. report.text) or "") .. shown .. running .. waiting
end

local function ask_and_send(mode)
  return function(opts)
    -- With a range (:'<,'>OpenVaalaSend …), the lines go along: file path, line range and code.
    local context = (opts.range or 0) > 0 and chat.context(0, opts.line1, opts.line2) or nil
    local function send(text)
      M.send(context and (text .. "\n\n" .. context) or text, mode)
    end
    if opts.args ~= "" then
      return send(opts.args)
    end
    vim.ui.input({ prompt = "OpenVaala (" .. mode .. "): " }, function(text)
      if text and text ~= "" then
        send(text)
      end
    end)
  end
end

local function define_commands()
  local command = vim.api.nvim_create_user_command
  command("OpenVaalaNew", function(o)
    local dir, problem = M.resolve_dir(o.args)
    if problem then
      return notify(problem, vim.log.levels.ERROR)
    end
    M.new_conversation(dir, function(err, result)
      if not err then
        chat.open(result.conversation.conversationId)
      end
    end)
  end, { nargs = "?", complete = "dir", desc = "Start a conversation (in [dir]) and open its chat" })
  command("OpenVaalaChat", function()
    local cid = current()
    if cid then
      M.open(cid)
    end
  end, { desc = "Open the chat of the current conversation" })
  -- (:OpenVaalaContext is the context trace, in openvaala/context.lua.)
  command("OpenVaalaAdd", function(o)
    local cid = current()
    if cid then
      chat.compose(cid, chat.context(0, o.line1, o.line2))
    end
  end, { range = "%", desc = "Add the buffer (or the selected lines) to the composer as context" })
  command("OpenVaalaList", M.list, { desc = "Pick a conversation" })
  command("OpenVaalaOpen", function(o)
    M.open(o.args)
  end, { nargs = 1, desc = "Open a conversation by id" })
  command("OpenVaalaSend", ask_and_send("queue"), {
    nargs = "*",
    range = true,
    desc = "Send (queue); with a range, the selected lines go with it as context",
  })
  command("OpenVaalaSteer", ask_and_send("steer"), { nargs = "*", desc = "Send into the running turn" })
  command("OpenVaalaJump", ask_and_send("jump"), { nargs = "*", desc = "Interrupt and send" })
  command("OpenVaalaInterrupt", function()
    M.interrupt()
  end, { desc = "Interrupt the running turn" })
  command("OpenVaalaCompact", function()
    M.compact(function(err, r)
      if not err then
        notify(r.compacted and "compacted" or ("not compacted: " .. (r.reason or "")))
      end
    end)
  end, { desc = "Compact the conversation" })
  command("OpenVaalaFork", function()
    M.fork()
  end, { desc = "Fork the conversation" })
  command("OpenVaalaRewind", function()
    M.rewind()
  end, { desc = "Rewind to before one of your messages" })
  command("OpenVaalaFollow", function()
    M.follow()
  end, { desc = "Open an agent of the conversation" })
  command("OpenVaalaInput", function(o)
    M.input(o.args)
  end, {
    nargs = 1,
    complete = function()
      return { "edit", "withdraw", "steer", "jump" }
    end,
    desc = "Edit, withdraw, steer or jump a waiting input",
  })
  command("OpenVaalaAgent", function(o)
    M.set_agent(o.args)
  end, {
    nargs = "?",
    complete = agent_names,
    desc = "Choose the conversation's agent (picked from the configured ones without [name])",
  })
  command("OpenVaalaMode", function(o)
    M.set_permission_mode(o.args)
  end, {
    nargs = "?",
    complete = function()
      return allowed_modes(buffer.conversation_of(0) or M.state.current)
    end,
    desc = "Switch the permission mode: plan (read-only), ask (every write asks) or auto-edit",
  })
  command("OpenVaalaCwd", function(o)
    M.set_cwd(o.args)
  end, { nargs = "?", complete = "dir", desc = "Point the conversation at [dir] (default: the current directory)" })
  command("OpenVaalaApprovals", approvals.pick, { desc = "Answer a waiting approval" })
  command("OpenVaalaMcp", function()
    M.request("openvaala/mcp", nil, nil) -- the bridge shows the servers' state as a message
  end, { desc = "Show the MCP servers: ready with their tools, starting, or failed and why" })
  command("OpenVaalaResource", function()
    local cid = current()
    if cid then
      mcp.pick_resource(cid)
    end
  end, { desc = "Attach an MCP server's resource (@SERVER:URI) to the next message" })
  command("OpenVaalaPrompt", function()
    local cid = current()
    if cid then
      mcp.pick_prompt(cid)
    end
  end, { desc = "Put an MCP server's prompt (/mcp__SERVER__PROMPT) in the composer" })
  command("OpenVaalaInit", function()
    local cid = current()
    if cid then
      M.command("openvaala.init", { { conversationId = cid } })
    end
  end, { desc = "Ask the agent to write or improve the repository's AGENTS.md" })
  command("OpenVaalaRemember", function(opts)
    local cid = current()
    local scope, text = opts.args:match("^(user)%s+(.+)$")
    if not scope then
      scope, text = "project", opts.args
    end
    if cid and text ~= "" then
      M.command("openvaala.remember", { { conversationId = cid, scope = scope, text = text } })
    end
  end, { nargs = "+", desc = "Keep a note for later conversations ([user] TEXT)" })
  command("OpenVaalaMemory", function(opts)
    local cid = current()
    if cid then
      local scope = opts.args == "user" and "user" or "project"
      M.command("openvaala.memory", { { conversationId = cid, scope = scope } })
    end
  end, { nargs = "?", desc = "Open the project's (or the user's) memory file to edit" })
  command("OpenVaalaUsage", function()
    M.usage(function(err, r)
      if not err then
        notify("context " .. r.text)
      end
    end)
  end, { desc = "Show context usage" })
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  define_commands()
  buffer.setup(M)
  approvals.setup(M)
  chat.setup(M)
  mcp.setup(M)
  require("openvaala.context").setup(M)
end

return M
