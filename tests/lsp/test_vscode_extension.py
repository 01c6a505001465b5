"""editors/vscode/extension.js activated in Node against stand-ins for the VS Code API and the
language client: it registers its commands and the fallback transcript provider, and its status
bar follows the bridge's usage and events. (The bridge itself is tested as VS Code elsewhere.)"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_extension_activates_and_shows_usage() -> None:
    assert NODE is not None
    run = subprocess.run(
        [NODE, str(Path(__file__).with_name("vscode_smoke.js")), str(ROOT / "editors" / "vscode")],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    manifest = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    contributed = [c["command"] for c in manifest["contributes"]["commands"]]
    assert sorted(seen["commands"]) == sorted(contributed)
    assert seen["server"] == {"command": "openvaala", "args": ["lsp"]}
    assert seen["selector"] == [{"scheme": "openvaala"}]
    # No textDocumentContent from the server: the extension serves transcripts via render.
    assert seen["providers"] == ["openvaala"]
    assert seen["rendered"] == "# rendered"
    assert [m for m, _ in seen["requests"]][:3] == [
        "openvaala/conversations/new",
        "openvaala/subscribe",
        "openvaala/send",
    ]
    assert seen["status"][-1] == "$(sync~spin) $(comment-discussion) 77/32k (0%, reported)"
    assert seen["handlers"] == [
        "$/openvaala/composer",
        "$/openvaala/event",
        "$/openvaala/refresh",
        "$/openvaala/usage",
    ]
