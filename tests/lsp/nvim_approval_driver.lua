-- Drives editors/nvim in a headless Neovim for tests/lsp/test_neovim.py: two shell calls that
-- ask for approval, answered through the plugin's vim.ui.select (stubbed here as a user would
-- pick): "Allow once", then "Deny with a message…" and a typed message. Writes what it saw as
-- JSON to $OPENVAALA_TEST_OUT and quits.
local out_path = os.getenv("OPENVAALA_TEST_OUT")
local cid = os.getenv("OPENVAALA_TEST_CID")
vim.opt.rtp:prepend(os.getenv("OPENVAALA_TEST_PLUGIN"))

local results = { steps = {}, selects = {}, inputs = {}, prompts = {} }

local function finish()
  local f = assert(io.open(out_path, "w"))
  f:write(vim.json.encode(results))
  f:close()
  vim.cmd("qa!")
end

local function wait(what, cond, timeout)
  if not vim.wait(timeout or 15000, cond, 20) then
    error("timed out waiting for " .. what)
  end
  table.insert(results.steps, what)
end

-- The user: picks the next planned answer in vim.ui.select, types the deny message.
local picks = { "Allow once", "Deny with a message…" }
vim.ui.select = function(items, opts, on_choice)
  table.insert(results.selects, { prompt = opts.prompt, items = items })
  local pick = table.remove(picks, 1)
  vim.schedule(function()
    on_choice(pick)
  end)
end
vim.ui.input = function(opts, on_confirm)
  table.insert(results.inputs, opts.prompt)
  vim.schedule(function()
    on_confirm("not on this machine")
  end)
end
-- The bridge's own prompt, had it sent one: recorded, never answered.
vim.lsp.handlers["window/showMessageRequest"] = function(_, params)
  table.insert(results.prompts, params.message)
  return vim.NIL
end

local ok, err = pcall(function()
  local ov = require("openvaala")
  ov.setup({ cmd = { os.getenv("OPENVAALA_TEST_PYTHON"), "-m", "openvaala_server", "lsp" } })

  local subscribed
  ov.request("openvaala/subscribe", { conversationId = cid }, function(e, r)
    subscribed = e or r
  end)
  wait("subscribed", function()
    return subscribed ~= nil
  end)
  ov.state.current = cid

  local statusline
  local approvals = require("openvaala.approvals")
  local first
  ov.prompt("run: echo hi", "queue", function(e, r)
    first = e or r
  end)
  wait("first turn", function()
    if approvals.count(cid) > 0 and ov.state.usage[cid] then
      statusline = statusline or ov.statusline()
    end
    return first ~= nil
  end)
  results.first = first
  results.statusline_waiting = statusline

  local second
  ov.prompt("run: echo again", "queue", function(e, r)
    second = e or r
  end)
  wait("second turn", function()
    return second ~= nil
  end)
  results.second = second
  results.pending_after = approvals.count(cid)

  local rendered
  ov.request("openvaala/render", { uri = "openvaala://conversation/" .. cid }, function(e, r)
    rendered = e or r
  end)
  wait("transcript", function()
    return rendered ~= nil
  end)
  results.transcript = rendered.text
end)

if not ok then
  results.error = tostring(err)
end
finish()
