-- Drives editors/nvim in a headless Neovim for tests/lsp/test_neovim.py; writes what it saw as
-- JSON to $OPENVAALA_TEST_OUT and quits.
local T = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/nvim_support.lua")
local cid, results, wait = T.cid, T.results, T.wait

T.run(function(ov)

  local subscribed
  ov.request("openvaala/subscribe", { conversationId = cid }, function(e, r)
    subscribed = e or r
  end)
  wait("subscribed", function()
    return subscribed ~= nil
  end)
  ov.state.current = cid

  local first
  ov.prompt("hello from neovim", "queue", function(e, r)
    first = e or r
  end)
  wait("first reply", function()
    return first ~= nil
  end)
  results.first = first
  results.reply = ov.state.replies[cid]
  results.events = ov.state.events
  wait("usage", function()
    return ov.state.usage[cid] ~= nil
  end)
  results.statusline = ov.statusline()

  local second
  ov.send("second message", "queue", function(e, r)
    second = e or r
  end)
  wait("second turn", function()
    return second ~= nil and ov.state.status[cid] == "idle"
  end)
  results.second = second

  vim.cmd.edit("openvaala://conversation/" .. cid)
  local bufnr = vim.api.nvim_get_current_buf()
  wait("transcript and lenses", function()
    local text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
    return text:find("second message", 1, true) and #vim.lsp.codelens.get(bufnr) >= 4
  end)
  results.transcript = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  results.lenses = {}
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
    table.insert(results.lenses, { line = lens.range.start.line, title = lens.command.title })
  end
  results.buffer = { modifiable = vim.bo[bufnr].modifiable, filetype = vim.bo[bufnr].filetype }

  local compacted
  ov.compact(function(e, r)
    compacted = e or r
  end)
  wait("compact", function()
    return compacted ~= nil
  end)
  results.compact = compacted
  wait("transcript redrawn with the summary", function()
    local text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
    return text:find("Summary of the earlier conversation", 1, true) ~= nil
  end)
  results.statusline_after = ov.statusline()
end)
