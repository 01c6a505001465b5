-- Drives editors/nvim's context commands for tests/lsp/test_neovim_context.py.
local T = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/nvim_support.lua")
local cid, results, wait = T.cid, T.results, T.wait

T.run(function(ov)
  T.call("subscribe", ov.request, "openvaala/subscribe", { conversationId = cid })
  ov.state.current = cid
  T.call("first turn", ov.prompt, "first question", "queue")
  T.call("second turn", ov.prompt, "second question", "queue")
  wait("usage", function()
    return ov.state.usage[cid] ~= nil and ov.state.usage[cid].repliesUntilRefresh == 3
  end)
  results.statusline = ov.statusline()

  -- :OpenVaalaPin, the picker answered with the first question.
  local original = vim.ui.select
  vim.ui.select = function(choices, opts, on_choice)
    results.pin_choices = vim.tbl_map(opts.format_item, choices)
    on_choice(choices[1])
  end
  vim.cmd("OpenVaalaPin")
  wait("pinned", function()
    local r = T.call("snapshot", ov.request, "openvaala/subscribe", { conversationId = cid })
    results.pinned = r.snapshot.sessions[1].pinned
    return #results.pinned == 1
  end)
  vim.ui.select = original
  T.call("compact", ov.compact)

  vim.cmd("OpenVaalaContext")
  local context = require("openvaala.context")
  wait("the context float", function()
    return context.last_buffer ~= nil
  end)
  results.float = vim.api.nvim_buf_get_lines(context.last_buffer, 0, -1, false)
  vim.cmd("close")

  vim.cmd("OpenVaalaReplaced")
  wait("what the summary replaced", function()
    return context.last_replaced ~= nil
  end)
  results.replaced = context.last_replaced
  wait("the cursor at what it replaced", function()
    return vim.api.nvim_buf_get_name(0):find(cid, 1, true) ~= nil
      and vim.api.nvim_win_get_cursor(0)[1] == results.replaced.location.line + 1
  end)
  results.cursor_line = vim.api.nvim_get_current_line()
end)
