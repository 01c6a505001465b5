"""The Python fold (openvaala_server/client/view.py, used by the terminal UI and the editor
bridge) and the web client's fold (openvaala_web/static/js/state.js) agree: both replay the same
recorded daemon streams, and after the snapshot and after every notification their views of
the conversation are the same (items with their streamed text, turn state, inbox, usage, plan,
pins, compaction, pending approvals, sessions)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from openvaala_server.client.view import LOCAL_PREFIX, ConversationView
from tests.client.streams import NAMES, STREAMS, load

ROOT = Path(__file__).resolve().parents[2]
STATE_JS = ROOT / "openvaala_web" / "static" / "js" / "state.js"
RUNNER = Path(__file__).parent / "fold_runner.mjs"

# The session fields the snapshot carries apart from `info` (state.js strips the same ones).
NOT_INFO = {"items", "hasMore", "turn", "inbox", "usage", "plan", "pinned"}


def project(view: ConversationView) -> dict[str, Any]:
    sessions = {}
    for sid in sorted(view.sessions):
        s = view.sessions[sid]
        sessions[sid] = {
            "info": {k: v for k, v in s.info.items() if k not in NOT_INFO},
            "items": [i for i in s.items if not str(i.get("itemId")).startswith(LOCAL_PREFIX)],
            "hasMore": s.has_more,
            "turnId": s.turn_id,
            "inbox": s.inbox,
            "usage": s.usage or None,
            "plan": s.plan,
            "pinned": s.pinned,
            "compacting": s.compacting,
            "retrying": s.retry is not None,
        }
    projected: dict[str, Any] = {
        "conversation": view.conversation,
        "deleted": view.deleted,
        "seq": view.seq,
        "approvals": list(view.approvals),
        "sessions": sessions,
    }
    return orjson.loads(orjson.dumps(projected))  # type: ignore[no-any-return]


def python_views(name: str) -> list[dict[str, Any]]:
    stream = load(name)
    view = ConversationView.from_snapshot(stream.snapshot, stream.seq)
    views = [project(view)]
    for note in stream.notes:
        view.apply(note)
        views.append(project(view))
    return views


def js_views(name: str, tmp_path: Path) -> list[dict[str, Any]]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    module = tmp_path / "state.mjs"  # an ES module whatever the nearest package.json says
    module.write_bytes(STATE_JS.read_bytes())
    out = subprocess.run(
        [node, str(RUNNER), module.as_uri(), str(STREAMS / f"{name}.jsonl")],
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr.decode()
    return orjson.loads(out.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", NAMES)
def test_python_and_web_folds_agree_on_a_recorded_stream(name: str, tmp_path: Path) -> None:
    stream = load(name)
    py, js = python_views(name), js_views(name, tmp_path)
    assert len(py) == len(js) == len(stream.notes) + 1
    for step, (a, b) in enumerate(zip(py, js, strict=True)):
        what = "the snapshot" if step == 0 else stream.notes[step - 1]["method"]
        assert a == b, f"{name}: after {what} (step {step}) {first_difference(a, b)}"


def first_difference(a: object, b: object, path: str = "") -> str:
    """Where two JSON values first differ, for a readable failure."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key, "<missing>") != b.get(key, "<missing>"):
                return first_difference(
                    a.get(key, "<missing>"), b.get(key, "<missing>"), f"{path}.{key}"
                )
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{path}[{index}]")
    return f"{path}: python {a!r} != web {b!r}"
