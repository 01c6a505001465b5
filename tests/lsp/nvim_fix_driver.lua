-- Drives editors/nvim in a headless Neovim for tests/lsp/test_neovim_fix.py: a conversation
-- whose agent is not configured is fixed with :OpenVaalaAgent and pointed elsewhere with
-- :OpenVaalaCwd. Writes what it saw as JSON to $OPENVAALA_TEST_OUT and quits.
local T = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/nvim_support.lua")
local cid, results, wait = T.cid, T.results, T.wait
results.selects = {}

-- The picker answers with the agent the test names.
vim.ui.select = function(items, opts, on_choice)
  local shown = {}
  for _, item in ipairs(items) do
    table.insert(shown, opts.format_item and opts.format_item(item) or item)
  end
  table.insert(results.selects, { prompt = opts.prompt, items = shown })
  for _, item in ipairs(items) do
    if item.name == "default" then
      return on_choice(item)
    end
  end
  on_choice(nil)
end

T.run(function(ov)
  ov.state.current = cid
  vim.cmd.edit("openvaala://conversation/" .. cid)
  local bufnr = vim.api.nvim_get_current_buf()
  local function text()
    return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
  end
  wait("warning", function()
    return text():find("is not configured here", 1, true)
  end)
  results.before = text()

  vim.cmd("OpenVaalaAgent other")
  wait("agent other", function()
    return text():find("agent **other**", 1, true)
  end)
  results.after_other = text()

  vim.cmd("OpenVaalaAgent")
  wait("agent default", function()
    return text():find("agent **default**", 1, true)
  end)

  vim.fn.mkdir("elsewhere", "p")
  vim.cmd("OpenVaalaCwd elsewhere")
  wait("cwd", function()
    return text():find("/elsewhere`", 1, true)
  end)
  local done
  ov.prompt("run: pwd", "queue", function(e, r)
    done = e or r
  end)
  wait("prompt", function()
    return done ~= nil
  end)
  results.prompt = done
  wait("pwd shown", function()
    return select(2, text():gsub("/elsewhere\n", "")) > 0
  end)
  results.transcript = text()
  results.cwd = vim.fn.getcwd()
end)
