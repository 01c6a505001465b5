"""What an import must not trust in a bundle's conversations (docs/security.md, "Checkpoints
and bundles"): records that widen what tools may do, and the file modes of its members.

Runs on a staged conversation directory, before it is moved into place. A bundle is data someone
handed the user; what the user allowed in another conversation, on another machine, is not an
answer the user gave here, so `approval_granted` records (an "allow for this conversation") are
dropped, and each one is counted for the import's result. Likewise the agent a conversation or
session names: a bundle could name the widest agent the user has configured (an `ops` agent with
`sandbox = "off"`), so each such name is replaced by what the daemon says it may be
(`screen`). Everything staged is made private: directories 0700, files 0600
(docs/storage.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from openvaala_server.domain import records as r
from openvaala_server.protocol import codec
from openvaala_server.store import journal

# Metadata record types an import drops: each one lets later tool calls run unasked.
WIDENING_RECORDS = frozenset({r.APPROVAL_GRANTED})

# Metadata record types that name the agent a conversation's or a session's calls run as.
AGENT_RECORDS = frozenset({"conversation_created", "session_created", "session_agent_set"})


@dataclass
class Screened:
    grants_dropped: int = 0  # widening records dropped
    agents_reset: int = 0  # agent names `agent_for` changed


def screen(meta_path: Path, agent_for: Callable[[str], str] | None) -> Screened:
    """Rewrite `meta_path` with only the records the journal reader reads in it, each one
    re-serialised, without widening records and with every agent name `agent_for` would change
    changed.

    Lines are split and parsed by the journal's own reader (store/journal.parse_journal), never
    by another rule: a record judged here must be the record the daemon later reads. (A raw CR
    inside a record's JSON is whitespace to the JSON parser and no line break to the journal;
    `bytes.splitlines` broke the line there, the halves failed to parse, and a grant was kept
    unseen.) Lines the reader skips (not JSON, no seq or type, a torn tail) are not kept: each
    record kept is written back as orjson writes it, so what was checked is what is read."""
    read = journal.parse_journal(meta_path.read_bytes())
    result = Screened()
    kept: list[bytes] = []
    for record in read.records:
        if record["type"] in WIDENING_RECORDS:
            result.grants_dropped += 1
            continue
        if agent_for is not None and record["type"] in AGENT_RECORDS:
            named = record.get("agent")
            allowed = agent_for(named) if isinstance(named, str) else None
            if allowed is not None and allowed != named:
                record["agent"] = allowed
                result.agents_reset += 1
        kept.append(codec.dumps(record))
    _rewrite(meta_path, kept)
    return result


def _rewrite(meta_path: Path, lines: list[bytes]) -> None:
    tmp = meta_path.with_name(".tmp-" + meta_path.name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(b"".join(line + b"\n" for line in lines))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, meta_path)
    journal.fsync_dir(meta_path.parent)


def make_private(directory: Path) -> None:
    """Every directory under `directory` (itself included) 0700, every file 0600. Staged members
    are regular files and directories only (the import refuses links and devices)."""
    os.chmod(directory, 0o700)
    for root, dirs, files in os.walk(directory):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o700, follow_symlinks=False)
        for name in files:
            os.chmod(os.path.join(root, name), 0o600, follow_symlinks=False)
