-- Drives editors/nvim in a headless Neovim for tests/lsp/test_neovim_toolbox.py: the transcript
-- of a conversation whose agent made a plan and a patch, then :OpenVaalaMcp. Writes what it saw
-- as JSON to $OPENVAALA_TEST_OUT and quits.
local out_path = os.getenv("OPENVAALA_TEST_OUT")
local cid = os.getenv("OPENVAALA_TEST_CID")
vim.opt.rtp:prepend(os.getenv("OPENVAALA_TEST_PLUGIN"))

local results = { steps = {}, messages = {} }

local function finish()
  local f = assert(io.open(out_path, "w"))
  f:write(vim.json.encode(results))
  f:close()
  vim.cmd("qa!")
end

local function wait(what, cond, timeout)
  if not vim.wait(timeout or 20000, cond, 20) then
    error("timed out waiting for " .. what)
  end
  table.insert(results.steps, what)
end

-- What the user is told: the bridge's window/showMessage, as Neovim's own handler receives it.
local show = vim.lsp.handlers["window/showMessage"]
vim.lsp.handlers["window/showMessage"] = function(err, params, ctx, config)
  table.insert(results.messages, { text = params.message, level = params.type })
  return show(err, params, ctx, config)
end

local ok, err = pcall(function()
  local ov = require("openvaala")
  ov.setup({ cmd = { os.getenv("OPENVAALA_TEST_PYTHON"), "-m", "openvaala_server", "lsp" } })
  ov.state.current = cid
  vim.cmd.edit("openvaala://conversation/" .. cid)
  local bufnr = vim.api.nvim_get_current_buf()
  local function text()
    return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
  end
  wait("plan", function()
    return text():find("## Plan", 1, true)
  end)
  results.transcript = text()

  vim.cmd("OpenVaalaMcp")
  wait("mcp message", function()
    for _, m in ipairs(results.messages) do
      if m.text:find("MCP servers", 1, true) then
        return true
      end
    end
    return false
  end)
end)
if not ok then
  results.error = tostring(err)
end
finish()
