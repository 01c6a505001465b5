"""The recorded event streams (tests/client/streams/*.jsonl, made by record_streams.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

STREAMS = Path(__file__).parent / "streams"
NAMES = sorted(p.stem for p in STREAMS.glob("*.jsonl"))


@dataclass(frozen=True)
class Stream:
    snapshot: dict[str, Any]
    seq: int
    notes: list[dict[str, Any]]


def load(name: str) -> Stream:
    lines = [orjson.loads(line) for line in (STREAMS / f"{name}.jsonl").read_bytes().splitlines()]
    first = lines[0]
    return Stream(snapshot=first["snapshot"], seq=int(first["seq"]), notes=lines[1:])
