-- Driven by bench/nvim_keypress.py: in the chat sidebar, type a message in the composer and press
-- <C-s> (fed as keys, through the plugin's mapping); time from the keypress to the reply's first
-- streamed token arriving in Neovim ($/openvaala/event item/delta) and to the reply's first
-- words being drawn in the transcript buffer. Writes {runs: [{event_ms, drawn_ms}]} as JSON to $BENCH_OUT.
vim.opt.rtp:prepend(os.getenv("BENCH_PLUGIN"))
local out = { runs = {} }
local ok, err = pcall(function()
  local ov = require("openvaala")
  ov.setup({ cmd = { os.getenv("BENCH_PYTHON"), "-m", "openvaala_server", "lsp" } })
  local chat = require("openvaala.chat")
  local function wait(what, cond)
    assert(vim.wait(120000, cond, 1), "timed out: " .. what)
  end
  vim.cmd("OpenVaalaNew")
  wait("sidebar", function()
    return chat.shown() ~= nil and vim.b[vim.api.nvim_win_get_buf(chat.pair.transcript)].openvaala_version ~= nil
  end)
  local cid = chat.shown()
  local tbuf = vim.api.nvim_win_get_buf(chat.pair.transcript)
  local t0, first_event, first_drawn
  vim.api.nvim_create_autocmd("User", {
    pattern = "OpenVaalaEvent",
    callback = function(args)
      local e = args.data
      if t0 and not first_event and e.method == "item/delta" and e.conversationId == cid then
        first_event = vim.uv.hrtime()
      end
    end,
  })
  -- Drawn: the transcript shows one more demo reply than before (each starts "You said"; the
  -- first words, a few ms of demo pace after the first token).
  local replies_before = 0
  local function replies_shown()
    local n = 0
    for _, line in ipairs(vim.api.nvim_buf_get_lines(tbuf, 0, -1, false)) do
      if line:find("^You said") then
        n = n + 1
      end
    end
    return n
  end
  vim.api.nvim_buf_attach(tbuf, false, {
    on_lines = function()
      if t0 and not first_drawn then
        vim.schedule(function() -- read the buffer once the change is complete
          if t0 and not first_drawn and replies_shown() > replies_before then
            first_drawn = vim.uv.hrtime()
          end
        end)
      end
    end,
  })
  local runs = tonumber(os.getenv("BENCH_RUNS"))
  for i = 0, runs do -- run 0 warms up (the first turn's one-time costs)
    vim.api.nvim_set_current_win(chat.pair.composer)
    vim.api.nvim_buf_set_lines(chat.composers[cid], 0, -1, false, { "stream run " .. i })
    replies_before = replies_shown()
    t0, first_event, first_drawn = vim.uv.hrtime(), nil, nil
    vim.api.nvim_feedkeys(vim.keycode("<C-s>"), "mx", false)
    wait("first words drawn", function()
      return first_drawn ~= nil and first_event ~= nil
    end)
    if i > 0 then
      table.insert(out.runs, { event_ms = (first_event - t0) / 1e6, drawn_ms = (first_drawn - t0) / 1e6 })
    end
    t0 = nil
    wait("turn over", function()
      return ov.state.status[cid] == "idle"
    end)
  end
end)
if not ok then
  out.error = tostring(err)
end
local f = assert(io.open(os.getenv("BENCH_OUT"), "w"))
f:write(vim.json.encode(out))
f:close()
vim.cmd("qa!")
