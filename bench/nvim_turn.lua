-- Driven by bench/nvim.py: seed a transcript of about $BENCH_LINES lines, then measure Neovim's
-- own CPU time (user + system, from getrusage) for one streamed turn shown in the transcript.
vim.opt.rtp:prepend(os.getenv("BENCH_PLUGIN"))
local out = {}
local ok, err = pcall(function()
  local ov = require("openvaala")
  ov.setup({ cmd = { os.getenv("BENCH_PYTHON"), "-m", "openvaala_server", "lsp" } })
  local function wait(what, cond)
    assert(vim.wait(120000, cond, 10), "timed out: " .. what)
  end
  local created
  ov.new_conversation(nil, function(e, r)
    created = e or r
  end)
  wait("new", function()
    return created ~= nil
  end)
  local cid = created.conversation.conversationId
  vim.cmd.edit(vim.fn.fnameescape(created.uri))
  local bufnr = vim.api.nvim_get_current_buf()
  local lines = {}
  for i = 1, tonumber(os.getenv("BENCH_LINES")) do
    lines[i] = "seed line " .. i .. " of the earlier conversation"
  end
  local seeded
  ov.prompt(table.concat(lines, "\n"), "queue", function(e, r)
    seeded = e or r
  end)
  wait("seeded", function()
    return seeded ~= nil and vim.b[bufnr].openvaala_version ~= nil
      and table.concat(vim.api.nvim_buf_get_lines(bufnr, -6, -1, false), "\n"):find("real work", 1, true)
  end)
  vim.wait(300, function()
    return false
  end)
  if os.getenv("BENCH_TREESITTER") == "1" then -- as with nvim-treesitter's highlighting on
    vim.treesitter.start(bufnr, "markdown")
  end
  out.lines_before = vim.api.nvim_buf_line_count(bufnr)
  out.treesitter = vim.treesitter.highlighter.active[bufnr] ~= nil
  out.syntax = vim.bo[bufnr].syntax
  -- Headless Neovim has no UI, so nothing is redrawn unless asked: redraw once per batch of
  -- changes, as the main loop does with a UI attached (highlighting the window showing the end).
  local pending = false
  vim.api.nvim_buf_attach(bufnr, false, {
    on_lines = function()
      if not pending then
        pending = true
        vim.schedule(function()
          pending = false
          vim.cmd.redraw()
        end)
      end
    end,
  })
  local before = vim.uv.getrusage()
  local t0 = vim.uv.hrtime()
  local done
  ov.prompt("stream a reply of some forty words into this transcript please", "queue", function(e, r)
    done = e or r
  end)
  wait("turn", function()
    local tail = table.concat(vim.api.nvim_buf_get_lines(bufnr, -8, -1, false), "\n")
    return done ~= nil and tail:find("stream a reply", 1, true) and tail:find("real work", 1, true)
  end)
  local after = vim.uv.getrusage()
  local function secs(t)
    return t.sec + t.usec / 1e6
  end
  out.cpu_s = (secs(after.utime) - secs(before.utime)) + (secs(after.stime) - secs(before.stime))
  out.wall_s = (vim.uv.hrtime() - t0) / 1e9
  out.lines_after = vim.api.nvim_buf_line_count(bufnr)
  out.status = done.status
end)
if not ok then
  out.error = tostring(err)
end
local f = assert(io.open(os.getenv("BENCH_OUT"), "w"))
f:write(vim.json.encode(out))
f:close()
vim.cmd("qa!")
