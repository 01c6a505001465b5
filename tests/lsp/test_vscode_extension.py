"""editors/vscode/extension.js activated in Node against stand-ins for the VS Code API and the
language client: it registers its commands and the fallback transcript provider, its status
bar follows the bridge's usage and events, and approval requests become buttons answered through
the bridge's `openvaala.respondApproval`. (The bridge itself is tested as VS Code elsewhere.)"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")


@pytest.fixture(scope="module")
def seen() -> dict[str, Any]:
    """What the extension did, activated once for the module against the stand-ins
    (vscode_smoke.js plays every scene in one run)."""
    if NODE is None:
        pytest.skip("node is not installed")
    run = subprocess.run(
        [NODE, str(Path(__file__).with_name("vscode_smoke.js")), str(ROOT / "editors" / "vscode")],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    result: dict[str, Any] = json.loads(run.stdout)
    return result


def test_extension_activates_and_shows_usage(seen: dict[str, Any]) -> None:
    manifest = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    contributed = [c["command"] for c in manifest["contributes"]["commands"]]
    assert sorted(seen["commands"]) == sorted(contributed)
    assert seen["server"] == {"command": "openvaala", "args": ["lsp"]}
    assert seen["selector"] == [{"scheme": "openvaala"}]
    # No textDocumentContent from the server: the extension serves transcripts via render.
    # (and the chat panel serves an approval's two sides to the diff editor.)
    assert seen["providers"] == ["openvaala-diff", "openvaala"]
    assert seen["views"] == ["openvaala.chat"]
    assert seen["rendered"] == "# rendered"
    assert [m for m, _ in seen["requests"]][:3] == [
        "openvaala/conversations/new",
        "openvaala/subscribe",
        "openvaala/send",
    ]
    assert "$(sync~spin) $(comment-discussion) 77/32k (0%, reported)" in seen["status"]
    assert seen["status"][-1] == "$(comment-discussion) 77/32k (0%, reported)"  # idle again
    assert seen["handlers"] == [
        "$/openvaala/approvalRequested",
        "$/openvaala/approvalResolved",
        "$/openvaala/composer",
        "$/openvaala/connection",
        "$/openvaala/event",
        "$/openvaala/mcpStatus",
        "$/openvaala/refresh",
        "$/openvaala/usage",
    ]
    # The chat panel on screen is told each MCP server's state.
    assert seen["posted"] == [
        {
            "type": "notification",
            "method": "$/openvaala/mcpStatus",
            "params": {"name": "t", "status": "ready", "tools": ["echo"]},
        }
    ]


def test_extension_answers_approvals_with_buttons(seen: dict[str, Any]) -> None:
    # It asks itself, so the bridge sends no showMessageRequest as well.
    assert seen["initializationOptions"] == {"approvals": "plugin", "progress": False}

    def buttons(i: str) -> list[str]:
        scope = f"shell: exactly the command `echo {i}`; nothing else"
        return [
            "Allow once",
            f"Allow for this conversation: {scope}",
            "Deny",
            "Deny with a message…",
        ]

    asked = [(a["message"], a["options"], a["items"]) for a in seen["asked"]]
    assert asked[:5] == [
        (f"OpenVaala: default wants to use shell: echo {i}", {"modal": False}, buttons(i))
        for i in ("one", "two", "three", "late", "four")
    ]
    # A write's approval offers its diff first; shown in the diff editor, it is asked again.
    assert [a[2] for a in asked[5:]] == [["Show the Diff", *buttons("five")]] * 2
    assert seen["executed"] == [
        [
            "vscode.diff",
            "openvaala-diff:/five/before/a.txt",
            "openvaala-diff:/five/after/a.txt",
            "a.txt (update, proposed)",
            "[object Object]",
        ]
    ]
    answered = [
        params["arguments"][0]
        for method, params in seen["requests"]
        if method == "workspace/executeCommand"
    ]
    cid = "a" * 32
    assert answered == [
        {"conversationId": cid, "approvalId": "one", "decision": "allow"},
        {"conversationId": cid, "approvalId": "two", "decision": "deny", "message": "typed text"},
        {"conversationId": cid, "approvalId": "late", "decision": "deny"},
        {"conversationId": cid, "approvalId": "five", "decision": "allow"},
    ]
    # "three" was answered elsewhere while its buttons were up; "late" just as this answer left.
    assert seen["notifications"] == ["OpenVaala: that approval was already answered."] * 2
    # Waiting shows in the status bar; what the bridge has not yet told resolved (the dismissed
    # "four" among them) can be answered from the palette.
    assert seen["status_waiting"].endswith("$(warning) approval")
    assert seen["pending"] == ["default: echo hi"] * 3


def test_extension_starts_on_first_use_sets_markdown_and_cancels_its_progress(
    seen: dict[str, Any],
) -> None:
    manifest = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    # Not in every window: activation registers commands; the bridge starts on first use.
    assert "onStartupFinished" not in manifest["activationEvents"]
    assert seen["started_at_activation"] is False and seen["started"] is True
    # Every transcript, whoever opened it (fork, rewind, follow), is Markdown, once; other files
    # are untouched.
    assert seen["languages"] == [
        [f"openvaala://conversation/{'b' * 32}", "markdown"],
        [f"openvaala://conversation/{'c' * 32}", "markdown"],
        [f"openvaala://conversation/{'a' * 32}/session/{'d' * 32}", "markdown"],
    ]
    # A running turn shows the extension's own progress with a cancel button, which interrupts
    # the turn; the progress ends when the conversation is idle again.
    assert seen["progress"] == [{"title": "OpenVaala: working…", "cancellable": True, "done": True}]
    interrupts = [p for m, p in seen["requests"] if m == "openvaala/interrupt"]
    assert interrupts == [{"conversationId": "a" * 32}]


def test_extension_changes_agent_and_working_directory(seen: dict[str, Any]) -> None:
    manifest = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    titles = {c["command"]: c["title"] for c in manifest["contributes"]["commands"]}
    assert titles["openvaala.ui.setAgent"] == "Change Agent…"
    assert titles["openvaala.ui.setCwd"] == "Change Working Directory…"
    assert titles["openvaala.ui.mcp"] == "Show MCP Servers"
    assert seen["mcp"] == [["openvaala/mcp", {}]]  # the bridge shows the servers' state
    # The configured agents are offered; the one picked is set through the bridge's command.
    assert seen["agentChoices"] == ["default: General", "other: Another"]
    cid = "a" * 32
    assert seen["fix"] == [
        ["openvaala/agents", {}],
        [
            "workspace/executeCommand",
            {
                "command": "openvaala.setAgent",
                "arguments": [{"conversationId": cid, "agent": "other"}],
            },
        ],
        [
            "workspace/executeCommand",
            {
                "command": "openvaala.setCwd",
                "arguments": [{"conversationId": cid, "cwd": "/tmp/moved here"}],
            },
        ],
    ]
    assert seen["folderDialog"]["canSelectFolders"] is True
    assert seen["fixNotes"] == [
        "OpenVaala: agent other.",
        "OpenVaala: working directory /tmp/moved here.",
    ]


def test_extension_sets_the_permission_mode_from_the_palette(seen: dict[str, Any]) -> None:
    manifest = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    titles = {c["command"]: c["title"] for c in manifest["contributes"]["commands"]}
    assert titles["openvaala.ui.setPermissionMode"] == "Set Permission Mode"
    # The modes the agent allows, narrowest first, the one in force checked and named.
    assert seen["modeChoices"] == [
        ["$(blank) Plan (read-only)", ""],
        ["$(blank) Ask every write", ""],
        ["$(check) Auto-edit", "current"],
    ]
    assert seen["modePrompt"] == "Permission mode (now: Auto-edit)"
    cid = "a" * 32
    # Read from the conversation's snapshot each time; only a change is sent.
    assert seen["mode"] == [
        ["openvaala/subscribe", {"conversationId": cid}],
        ["openvaala/setPermissionMode", {"conversationId": cid, "mode": "plan"}],
        ["openvaala/subscribe", {"conversationId": cid}],
    ]
    assert seen["modeNotes"] == ["OpenVaala: permission mode Plan (read-only)."]


def test_extension_keeps_a_turn_running_through_a_reconnection(seen: dict[str, Any]) -> None:
    # One progress for the turn: still up after `connected` named it running, ended (not shown
    # again) once a new daemon's `connected` did not.
    assert seen["reconnect"] == {
        "kept": [False],
        "ended": [True],
        "notes": [
            "OpenVaala: connection to the daemon lost, reconnecting…",
            "OpenVaala: reconnected",
            "OpenVaala: connection to the daemon lost, reconnecting…",
            "OpenVaala: reconnected (a new daemon was started)",
        ],
    }
