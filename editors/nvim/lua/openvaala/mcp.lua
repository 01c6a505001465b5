-- MCP resources and prompts from the composer (docs/editors.md, "Neovim"):
--   :OpenVaalaResource  pick a ready server's resource (vim.ui.select); `@SERVER:URI` goes into
--                       the composer, and the resource's text goes with the message when sent
--   :OpenVaalaPrompt    pick a ready server's prompt; `/mcp__SERVER__PROMPT name=` goes into the
--                       composer, to fill in and send
--   <C-x><C-o>          in the composer, on `/…` at the start of the message: complete the
--                       ready servers' prompts (the composer's omnifunc)
-- A message that starts with `/mcp__` or mentions `@SERVER:URI` is read by the bridge before it
-- is sent (`openvaala/mcp/expand`): the server's filled-in prompt, or the text with each
-- resource appended. A malformed command or a refusal is shown, and the message is not sent.

local M = {}
local ov -- the openvaala module (set in setup)
-- How long the omnifunc waits for the bridge, and the servers it last answered with.
local COMPLETE_TIMEOUT_MS = 8000
local last_servers = nil

--- Whether the bridge has to read `text` first: a prompt command, or a `@SERVER:URI` mention.
function M.needs_expanding(text)
  return text:match("^%s*/mcp__") ~= nil or text:match("@[%w_-]+:%S") ~= nil
end

--- callback(err, message): the message to send for `text` (itself when nothing is to expand).
function M.expand(text, callback)
  if not M.needs_expanding(text) then
    return callback(nil, text)
  end
  ov.request("openvaala/mcp/expand", { text = text }, function(err, result)
    callback(err, result and result.text)
  end)
end

--- Offer the ready servers' `field` ("resources" or "prompts") with vim.ui.select, each item
--- with its `server` added; on_pick(item) with the one picked.
local function pick(field, prompt, format_item, on_pick)
  ov.request("openvaala/mcp/list", vim.empty_dict(), function(err, result)
    if err then
      return
    end
    last_servers = result.servers or last_servers
    local items = {}
    for _, server in ipairs(result.servers or {}) do
      if server.status == "ready" then
        for _, item in ipairs(server[field] or {}) do
          table.insert(items, vim.tbl_extend("force", item, { server = server.name }))
        end
      end
    end
    if #items == 0 then
      return vim.notify(
        "OpenVaala: no ready MCP server offers " .. field .. " (a server starts when a turn first needs it)",
        vim.log.levels.WARN
      )
    end
    local opts = { prompt = prompt, kind = "openvaala.mcp", format_item = format_item }
    vim.ui.select(items, opts, function(item)
      if item then
        on_pick(item)
      end
    end)
  end)
end

--- Add `text` at the end of the composer of `cid` (opening the chat), on the last line.
local function append(cid, text)
  local chat = require("openvaala.chat").open(cid)
  local last = vim.api.nvim_buf_line_count(chat.buf)
  local line = vim.api.nvim_buf_get_lines(chat.buf, last - 1, last, false)[1] or ""
  local pad = (line == "" or line:match("%s$")) and "" or " "
  vim.api.nvim_buf_set_lines(chat.buf, last - 1, last, false, { line .. pad .. text })
  local win = chat.composer
  if win and vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_set_cursor(win, { last, #line + #pad + #text })
  end
end

--- Pick a resource; its `@SERVER:URI` goes into the composer of `cid`.
function M.pick_resource(cid)
  pick("resources", "MCP resource:", function(r)
    return "@" .. r.server .. ":" .. r.uri .. (r.name and r.name ~= "" and ("  " .. r.name) or "")
  end, function(r)
    append(cid, "@" .. r.server .. ":" .. r.uri .. " ")
  end)
end

--- Pick a prompt; `/mcp__SERVER__PROMPT name= …` replaces the composer of `cid`.
function M.pick_prompt(cid)
  pick("prompts", "MCP prompt:", function(p)
    local help = p.description ~= "" and ("  " .. p.description) or ""
    return "/mcp__" .. p.server .. "__" .. p.name .. help
  end, function(p)
    local words = { "/mcp__" .. p.server .. "__" .. p.name }
    for _, argument in ipairs(p.arguments or {}) do
      table.insert(words, argument .. "=")
    end
    local chat = require("openvaala.chat").open(cid)
    vim.api.nvim_buf_set_lines(chat.buf, 0, -1, false, { table.concat(words, " ") })
  end)
end

--- The composer's omnifunc: the ready servers' prompts, completing `/…` at the start of the
--- message (its first line). Asks the bridge synchronously, as a completion must answer.
function M.complete(findstart, base)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local typed = vim.api.nvim_get_current_line():sub(1, col)
  if findstart == 1 then
    local start = row == 1 and typed:find("^%s*/%S*$") and typed:find("/", 1, true)
    return start and start - 1 or -3 -- -3: no completion here, quietly
  end
  local client = ov.client()
  -- A busy machine can take seconds to answer (the bridge asks the daemon): waiting longer beats
  -- an empty menu, and a timeout falls back to the last list seen rather than offering nothing.
  local answer = client and client:request_sync("openvaala/mcp/list", vim.empty_dict(), COMPLETE_TIMEOUT_MS)
  local servers = answer and answer.result and answer.result.servers
  if servers then
    last_servers = servers
  else
    servers = last_servers or {}
  end
  local items = {}
  for _, server in ipairs(servers) do
    for _, p in ipairs(server.status == "ready" and server.prompts or {}) do
      local command = "/mcp__" .. server.name .. "__" .. p.name
      if vim.startswith(command, base) then
        local hint = #(p.arguments or {}) > 0 and (table.concat(p.arguments, "= ") .. "=") or ""
        table.insert(items, { word = command .. " ", abbr = command, menu = hint, info = p.description })
      end
    end
  end
  return items
end

function M.setup(module)
  ov = module
end

return M
