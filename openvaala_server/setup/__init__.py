"""`openvaala setup`: pick a provider, check the key, list the models, write config.toml and run
one test turn (docs/configuration.md, "Setting up with `openvaala setup`")."""
