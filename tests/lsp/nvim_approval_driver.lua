-- Drives editors/nvim in a headless Neovim for tests/lsp/test_neovim.py: two shell calls that
-- ask for approval, answered through the plugin's vim.ui.select (stubbed here as a user would
-- pick): "Allow once", then "Deny with a message…" and a typed message. Writes what it saw as
-- JSON to $OPENVAALA_TEST_OUT and quits.
local T = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/nvim_support.lua")
local cid, results, wait = T.cid, T.results, T.wait
results.selects = {}
results.inputs = {}
results.prompts = {}

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

T.run(function(ov)

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
