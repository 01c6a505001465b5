-- :checkhealth openvaala — what the plugin needs: Neovim 0.11+, setup() called, the bridge
-- command runnable, and the bridge connected to the daemon.
local M = {}

function M.check()
  local health = vim.health
  health.start("openvaala")
  if vim.fn.has("nvim-0.11") == 1 then
    health.ok("Neovim " .. tostring(vim.version()))
  else
    health.error("Neovim 0.11 or newer is needed", { "upgrade Neovim" })
  end
  local ok, ov = pcall(require, "openvaala")
  if not ok then
    return health.error("require('openvaala') failed: " .. tostring(ov))
  end
  if vim.fn.exists(":OpenVaalaNew") ~= 2 then
    health.warn("setup() was not called", { 'add require("openvaala").setup({}) to your config' })
  else
    health.ok("setup() called")
  end
  local cmd = ov.config.cmd or {}
  if cmd[1] and vim.fn.executable(cmd[1]) == 1 then
    health.ok("bridge command: " .. table.concat(cmd, " "))
  else
    health.error("bridge command not found: " .. tostring(cmd[1]), {
      "install OpenVaala (pip install openvaala) or set cmd = { '/path/to/openvaala', 'lsp' } in setup()",
    })
    return
  end
  local client = ov.client()
  if not client then
    return health.error("could not start the bridge (" .. table.concat(cmd, " ") .. ")")
  end
  local done, result = false, nil
  client:request("openvaala/agents", vim.empty_dict(), function(err, r)
    done, result = true, err or r
  end)
  vim.wait(15000, function()
    return done
  end, 20)
  if not done then
    health.error("the bridge did not answer within 15 s")
  elseif result.message then
    health.error("the bridge cannot reach the daemon: " .. result.message, {
      "run `openvaala serve status`; start it with `openvaala serve start`",
    })
  else
    local names = vim.tbl_map(function(a)
      return a.name
    end, result.agents or {})
    health.ok("connected to the daemon; agents: " .. table.concat(names, ", "))
  end
  if ov.state.connection and ov.state.connection ~= "connected" then
    health.warn("connection to the daemon: " .. ov.state.connection)
  end
end

return M
