"""What an import must not trust in a bundle's conversations (docs/security.md, "Checkpoints
and bundles"): records that widen what tools may do, and the file modes of its members.

Runs on a staged conversation directory, before it is moved into place. A bundle is data someone
handed the user; what the user allowed in another conversation, on another machine, is not an
answer the user gave here, so `approval_granted` records (an "allow for this conversation") are
dropped, and each one is counted for the import's result. Likewise the agent a conversation or
session names: a bundle could name the widest agent the user has configured (an `ops` agent with
`sandbox = "off"`), so each such name is replaced by what the daemon says it may be
(`reset_agents`). Everything staged is made private: directories 0700, files 0600
(docs/storage.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import orjson

from openvaala_server.domain import records as r
from openvaala_server.store import journal

# Metadata record types an import drops: each one lets later tool calls run unasked.
WIDENING_RECORDS = frozenset({r.APPROVAL_GRANTED})


def drop_widening_records(meta_path: Path) -> int:
    """Rewrite `meta_path` without widening records; how many there were. A line that is not a
    record is kept as it is (every reader skips it, as a damaged line on disk)."""
    data = meta_path.read_bytes()
    kept: list[bytes] = []
    dropped = 0
    for line in data.splitlines():
        if _widens(line):
            dropped += 1
        else:
            kept.append(line)
    if dropped:
        _rewrite(meta_path, kept)
    return dropped


# Metadata record types that name the agent a conversation's or a session's calls run as.
AGENT_RECORDS = frozenset({"conversation_created", "session_created", "session_agent_set"})


def reset_agents(meta_path: Path, agent_for: Callable[[str], str]) -> int:
    """Rewrite `meta_path` with every agent name `agent_for` would change changed; how many."""
    kept: list[bytes] = []
    reset = 0
    for line in meta_path.read_bytes().splitlines():
        record = _record(line)
        if record is not None and record.get("type") in AGENT_RECORDS:
            named = record.get("agent")
            allowed = agent_for(named) if isinstance(named, str) else None
            if allowed is not None and allowed != named:
                record["agent"] = allowed
                line = orjson.dumps(record)
                reset += 1
        kept.append(line)
    if reset:
        _rewrite(meta_path, kept)
    return reset


def _rewrite(meta_path: Path, lines: list[bytes]) -> None:
    tmp = meta_path.with_name(".tmp-" + meta_path.name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(b"".join(line + b"\n" for line in lines))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, meta_path)
    journal.fsync_dir(meta_path.parent)


def _record(line: bytes) -> dict[str, object] | None:
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


def _widens(line: bytes) -> bool:
    record = _record(line)
    return record is not None and record.get("type") in WIDENING_RECORDS


def make_private(directory: Path) -> None:
    """Every directory under `directory` (itself included) 0700, every file 0600. Staged members
    are regular files and directories only (the import refuses links and devices)."""
    os.chmod(directory, 0o700)
    for root, dirs, files in os.walk(directory):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o700, follow_symlinks=False)
        for name in files:
            os.chmod(os.path.join(root, name), 0o600, follow_symlinks=False)
