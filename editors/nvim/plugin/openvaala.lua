-- Loaded with the plugin; nothing starts until require("openvaala").setup() is called.
if vim.g.loaded_openvaala then
  return
end
vim.g.loaded_openvaala = true
