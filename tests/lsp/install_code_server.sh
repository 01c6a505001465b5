#!/bin/sh
# Installs code-server (VS Code's workbench, served to a browser) from npm into DIR, for
# tests/lsp/test_vscode_real.py:
#
#   sh tests/lsp/install_code_server.sh /opt/code-server
#   OPENVAALA_CODE_SERVER=/opt/code-server/node_modules/.bin/code-server pytest tests/lsp/test_vscode_real.py
#
# Needs Node.js 20, npm, a C++ compiler, ripgrep, and (for Kerberos proxy auth only)
# Debian's libkrb5-dev. It works where
# only the npm and Debian registries are reachable: code-server's own install downloads ripgrep
# from elsewhere, so its install scripts are skipped, Debian's rg stands in, and the native
# modules are built here.
set -eu
dir=${1:?usage: install_code_server.sh DIR}
version=4.100.3 # the last code-server on Node.js 20
mkdir -p "$dir"
cd "$dir"
npm install --ignore-scripts --no-audit --no-fund "code-server@$version"
npm rebuild argon2
cd node_modules/code-server/lib/vscode
npm install --omit=dev --ignore-scripts --no-audit --no-fund
mkdir -p node_modules/@vscode/ripgrep/bin
ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
# node-pty's post-install step after its build asks npx for node-gyp: its build is what counts.
npm rebuild @parcel/watcher @vscode/spdlog native-watchdog @vscode/deviceid
# kerberos (Kerberos proxy authentication only) needs libkrb5-dev; without it VS Code runs.
npm rebuild kerberos || echo "kerberos not built (no libkrb5-dev): Kerberos proxy auth is off"
npm rebuild node-pty || test -f node_modules/node-pty/build/Release/pty.node
# What code-server's postinstall.sh does after installing its dependencies.
ln -sfn node_modules node_modules.asar
ln -sf code-linux.sh bin/remote-cli/code-server
ln -sf browser-linux.sh bin/helpers/browser.sh
cd extensions
npm install --omit=dev --no-audit --no-fund
echo "code-server: $dir/node_modules/.bin/code-server"
