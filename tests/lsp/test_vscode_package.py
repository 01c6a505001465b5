"""`vsce package` (npm @vscode/vsce) packages editors/vscode with the chat panel: the VSIX carries
the panel's webview, the web UI's modules copied in by its prepublish step (byte for byte the
web UI's own), and the bundled language client, and leaves node_modules and the build script
out. Skipped without node and npm; npm reaches only its registry, once: the packages are kept in
pytest's cache (tests/lsp/vscode_npm.py) and linked into the copy packaged."""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.lsp.vscode_npm import link_node_modules, vscode_node_modules

__all__ = ["vscode_node_modules"]  # the fixture

ROOT = Path(__file__).resolve().parents[2]
NPM = shutil.which("npm")
WEB = ROOT / "openvaala_web" / "static"


@pytest.mark.skipif(NPM is None, reason="npm is not installed")
@pytest.mark.timeout(300)  # the first run's npm install, on a loaded machine
def test_vsce_packages_the_chat_panel_with_the_web_modules(
    tmp_path: Path, vscode_node_modules: Path
) -> None:
    ext = tmp_path / "vscode"
    shutil.copytree(
        ROOT / "editors" / "vscode",
        ext,
        ignore=shutil.ignore_patterns("node_modules", "dist", "web", "*.vsix"),
    )
    link_node_modules(ext, vscode_node_modules)  # its dependencies, esbuild for the bundle, vsce
    env = {**os.environ, "OPENVAALA_WEB_STATIC": str(WEB)}
    vsix = tmp_path / "openvaala.vsix"
    done = subprocess.run(
        [str(vscode_node_modules / ".bin" / "vsce"), "package", "--out", str(vsix)],
        cwd=ext,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        for shared in ("js/state.js", "js/markdown.js", "js/mcp_picker.js", "vendor/purify.es.mjs"):
            assert z.read(f"extension/media/web/{shared}") == (WEB / shared).read_bytes()
    parts = ("extension.js", "chat_view.js", "saved_state.js", "media/chat.js", "media/mcp.js")
    for part in (*parts, "media/chat.css"):
        assert f"extension/{part}" in names
    assert "extension/dist/languageclient.js" in names
    assert not [n for n in names if "/node_modules/" in n or n.startswith("extension/scripts/")]
