-- What every headless Neovim driver (tests/lsp/nvim_*driver.lua) shares: the plugin on the
-- runtimepath, the plugin set up against `python -m openvaala_server lsp`, `wait` for a
-- condition, and the results written as JSON to $OPENVAALA_TEST_OUT (with `error` if the driver
-- failed) before Neovim quits. A driver loads it with
--   local T = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/nvim_support.lua")
vim.opt.rtp:prepend(os.getenv("OPENVAALA_TEST_PLUGIN"))

local T = {
  cid = os.getenv("OPENVAALA_TEST_CID"), -- the conversation the test made, if any
  results = { steps = {} },
}

--- Wait (default 20 s) until cond() is true; the step is recorded, a timeout is an error.
function T.wait(what, cond, timeout)
  if not vim.wait(timeout or 20000, cond, 20) then
    error("timed out waiting for " .. what)
  end
  table.insert(T.results.steps, what)
end

--- Call fn(..., callback) and wait for the callback: its error or its result.
function T.call(what, fn, ...)
  local answer
  local args = { ... }
  table.insert(args, function(e, r)
    answer = e or r or vim.NIL
  end)
  fn(unpack(args))
  T.wait(what, function()
    return answer ~= nil
  end)
  return answer
end

--- Set the plugin up, run body(ov), write the results and quit.
function T.run(body)
  local ok, err = pcall(function()
    local ov = require("openvaala")
    ov.setup({ cmd = { os.getenv("OPENVAALA_TEST_PYTHON"), "-m", "openvaala_server", "lsp" } })
    body(ov)
  end)
  if not ok then
    T.results.error = tostring(err)
  end
  local f = assert(io.open(os.getenv("OPENVAALA_TEST_OUT"), "w"))
  f:write(vim.json.encode(T.results))
  f:close()
  vim.cmd("qa!")
end

return T
