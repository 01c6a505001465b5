"""Typed items: TypedDict (plain dicts, orjson) against msgspec Structs on the item hot path.

What a turn and a conversation's open do with every item: build it, encode it (the journal line
and the wire frame are both JSON), decode it (opening a conversation reads its journal), and keep
it in memory. Run: `python3 bench/typed_core.py [N]` (N items, default 10 000). A micro-benchmark
of the two representations, not of the daemon: the msgspec variant exists only here. The figures
and the decision are in docs/design.md ("Typed core").
"""

from __future__ import annotations

import sys
import timeit
import tracemalloc
from collections.abc import Callable

import msgspec
import orjson

from openvaala_server.domain import records as r


class AgentMessage(msgspec.Struct, tag_field="type", tag="agent_message", omit_defaults=True):
    itemId: str
    sessionId: str
    turnId: str | None
    createdAt: str
    status: str
    text: str


class ToolResult(msgspec.Struct, tag_field="type", tag="tool_result", omit_defaults=True):
    itemId: str
    sessionId: str
    turnId: str | None
    createdAt: str
    status: str
    callId: str
    name: str
    output: str
    isError: bool
    truncated: bool = False


AnyStruct = AgentMessage | ToolResult
TEXT = "The command finished. It printed the lines below, and the exit code was 0. " * 3
OUTPUT = "line of output\n" * 20


def dict_item(i: int) -> r.Item:
    if i % 2:
        return {
            "itemId": f"{i:032x}",
            "type": r.AGENT_MESSAGE,
            "sessionId": "a" * 32,
            "turnId": "b" * 32,
            "createdAt": "2026-12-02T10:00:25.630813Z",
            "status": r.COMPLETED,
            "text": TEXT,
        }
    return {
        "itemId": f"{i:032x}",
        "type": r.TOOL_RESULT,
        "sessionId": "a" * 32,
        "turnId": "b" * 32,
        "createdAt": "2026-12-02T10:00:25.630813Z",
        "status": r.COMPLETED,
        "callId": "call-1",
        "name": "shell",
        "output": OUTPUT,
        "isError": False,
    }


def struct_item(i: int) -> AnyStruct:
    if i % 2:
        return AgentMessage(
            f"{i:032x}", "a" * 32, "b" * 32, "2026-12-02T10:00:25.630813Z", r.COMPLETED, TEXT
        )
    return ToolResult(
        f"{i:032x}",
        "a" * 32,
        "b" * 32,
        "2026-12-02T10:00:25.630813Z",
        r.COMPLETED,
        "call-1",
        "shell",
        OUTPUT,
        False,
    )


def best(fn: Callable[[], object], repeat: int = 5) -> float:
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def memory(build: Callable[[], list[object]]) -> int:
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = build()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    return after - before


def main(n: int) -> None:
    dicts = [dict_item(i) for i in range(n)]
    structs = [struct_item(i) for i in range(n)]
    dict_lines = [orjson.dumps(d) for d in dicts]
    struct_lines = [msgspec.json.encode(s) for s in structs]
    assert orjson.loads(struct_lines[0]) == orjson.loads(dict_lines[0])  # the same JSON
    decoder = msgspec.json.Decoder(AnyStruct)
    encoder = msgspec.json.Encoder()

    def build_dicts() -> None:
        out: list[r.Item] = []
        for i in range(n):
            out.append(dict_item(i))

    def build_structs() -> None:
        out: list[AnyStruct] = []
        for i in range(n):
            out.append(struct_item(i))

    rows: list[tuple[str, float, float]] = [
        ("build + append", best(build_dicts), best(build_structs)),
        (
            "encode (journal line / frame)",
            best(lambda: [orjson.dumps(d) for d in dicts]),
            best(lambda: [encoder.encode(s) for s in structs]),
        ),
        (
            "decode (open a conversation)",
            best(lambda: [orjson.loads(b) for b in dict_lines]),
            best(lambda: [decoder.decode(b) for b in struct_lines]),
        ),
        (
            "read a field of each (.get / attribute)",
            best(lambda: [d.get("text") for d in dicts]),
            best(lambda: [getattr(s, "text", None) for s in structs]),
        ),
    ]
    print(f"{n} items (half agent_message, half tool_result); best of 5, milliseconds")
    print(f"{'':42} {'TypedDict+orjson':>17} {'msgspec Struct':>15} {'ratio':>6}")
    for name, d, s in rows:
        print(f"{name:42} {d * 1000:17.2f} {s * 1000:15.2f} {s / d:6.2f}")
    mem_d = memory(lambda: [dict_item(i) for i in range(n)])
    mem_s = memory(lambda: [struct_item(i) for i in range(n)])
    print(
        f"{'memory held (tracemalloc), bytes/item':42} {mem_d / n:17.0f} {mem_s / n:15.0f}"
        f" {mem_s / mem_d:6.2f}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
