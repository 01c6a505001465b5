"""A fixed conversation snapshot (no daemon, no clock) for appearance tests."""

from __future__ import annotations

from typing import Any

CID = "0" * 31 + "1"
ROOT = "0" * 31 + "2"
CHILD = "0" * 31 + "3"
GRANDCHILD = "0" * 31 + "4"
SIBLING = "0" * 31 + "5"


def _item(n: int, type_: str, session: str = ROOT, **fields: Any) -> dict[str, Any]:
    return {
        "itemId": f"{n:032x}",
        "type": type_,
        "sessionId": session,
        "turnId": "f" * 32,
        "createdAt": "2025-01-01T00:00:00Z",
        "status": "completed",
        **fields,
    }


def snapshot() -> dict[str, Any]:
    items = [
        _item(1, "user_message", text="List the files, please.", origin="user"),
        _item(2, "reasoning", text="The user wants a listing: I will call the shell tool."),
        _item(
            3,
            "tool_call",
            callId="call-1",
            name="shell",
            arguments={"command": "ls -la"},
            argumentsText='{"command": "ls -la"}',
        ),
        _item(
            4, "tool_result", callId="call-1", name="shell", output="a.txt\nb.txt", isError=False
        ),
        _item(
            5,
            "agent_message",
            text="There are **two** files:\n\n- `a.txt`\n- `b.txt`\n",
        ),
        _item(6, "user_message", text="Now run the tests.", origin="user"),
        _item(7, "agent_message", text="Running the tests now", status="interrupted"),
        _item(
            8,
            "notice",
            kind="interrupted",
            text="The user interrupted the previous turn.",
        ),
    ]
    in_progress = [
        _item(9, "user_message", text="Try again with -q.", origin="user"),
        _item(
            10,
            "tool_call",
            callId="call-2",
            name="shell",
            arguments={"command": "pytest -q"},
        ),
        _item(
            11, "tool_result", callId="call-2", name="shell", output="....", status="in_progress"
        ),
    ]
    return {
        "conversation": {
            "conversationId": CID,
            "title": "Listing files",
            "cwd": "/home/user/project",
            "agent": "default",
            "model": "demo",
            "status": "running",
            "persisted": True,
            "rootSessionId": ROOT,
            "cwdExists": True,
            "modelAvailable": True,
        },
        "sessions": [
            {
                "sessionId": ROOT,
                "parentSessionId": None,
                "agent": "default",
                "model": "demo",
                "status": "running",
                "title": "Listing files",
                "depth": 0,
                "items": items,
                "hasMore": True,
                "turn": {"turnId": "e" * 32, "items": in_progress},
                "inbox": [
                    {
                        "inputId": "a" * 32,
                        "text": "Also check the docs",
                        "mode": "steer",
                        "origin": "user",
                    },
                    {
                        "inputId": "b" * 32,
                        "text": "Then summarize",
                        "mode": "queue",
                        "origin": "user",
                    },
                ],
                "usage": {
                    "used": 70_000,
                    "contextWindow": 100_000,
                    "threshold": 80_000,
                    "maxOutputTokens": 8_000,
                    "source": "reported",
                },
            },
            _session(CHILD, ROOT, "explorer", "running", "Find where the config is parsed", 1),
            _session(GRANDCHILD, CHILD, "explorer", "idle", "Read the docs", 2),
            _session(SIBLING, ROOT, "reviewer", "interrupted", "Review the test changes", 1),
        ],
    }


def _session(
    sid: str, parent: str, agent: str, status: str, title: str, depth: int
) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    turn = None
    if sid == CHILD:
        items = [
            _item(20, "user_message", CHILD, text=title, origin="user", fromSessionId=ROOT),
            _item(21, "agent_message", CHILD, text="I will search the sources first."),
        ]
        turn = {
            "turnId": "d" * 32,
            "items": [
                _item(
                    22,
                    "tool_call",
                    CHILD,
                    callId="call-3",
                    name="shell",
                    arguments={"command": "grep -rn load_config src/"},
                ),
                _item(
                    23,
                    "tool_result",
                    CHILD,
                    callId="call-3",
                    name="shell",
                    output="src/config.py:12:def load_config(path):",
                    status="in_progress",
                ),
            ],
        }
    return {
        "sessionId": sid,
        "parentSessionId": parent,
        "agent": agent,
        "model": "demo",
        "status": status,
        "title": title,
        "depth": depth,
        "items": items,
        "hasMore": False,
        "turn": turn,
        "inbox": [],
        "usage": {
            "used": 2_400,
            "contextWindow": 100_000,
            "threshold": 80_000,
            "source": "reported",
        }
        if items
        else {},
    }


# -- what the daemon would answer, for the screens that ask it (/resume, /context) -----------

CONVERSATIONS: list[dict[str, Any]] = [
    {
        "conversationId": CID,
        "title": "Listing files",
        "cwd": "/home/user/project",
        "status": "running",
        "archived": False,
    },
    {
        "conversationId": "0" * 30 + "11",
        "title": "Fix the config loader",
        "cwd": "/home/user/project",
        "status": "idle",
        "archived": False,
    },
    {
        "conversationId": "0" * 30 + "12",
        "title": "Config docs review",
        "cwd": "/home/user/docs",
        "status": "interrupted",
        "archived": False,
    },
    {
        "conversationId": "0" * 30 + "13",
        "title": "Release notes for 0.3",
        "cwd": "/home/user/project",
        "status": "idle",
        "archived": False,
    },
    {
        "conversationId": "0" * 30 + "14",
        "title": "Benchmark the terminal UI",
        "cwd": "/home/user/openvaala",
        "status": "failed",
        "archived": False,
    },
    {
        "conversationId": "0" * 30 + "15",
        "title": "Old config migration",
        "cwd": "/home/user/legacy",
        "status": "idle",
        "archived": True,
    },
    {
        "conversationId": "0" * 30 + "16",
        "title": "Scratch: regex experiments",
        "cwd": "/tmp",
        "status": "idle",
        "archived": True,
    },
]


class FixedClient:
    """Stands in for `openvaala_server.client.Client` where a screen asks the daemon something:
    `conversation/list` (the archived flag and the search, each word a prefix of a title word)
    from CONVERSATIONS, `conversation/usage` and `conversation/context` from `usage` (a list:
    one answer per call)."""

    def __init__(self, usage: list[dict[str, Any]] | None = None) -> None:
        self.usage = list(usage or [])
        self.server_info: dict[str, Any] = {}
        self.requests: list[tuple[str, dict[str, Any]]] = []

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        params = dict(params or {})
        self.requests.append((method, params))
        if method == "conversation/list":
            words = str(params.get("search") or "").lower().split()
            archived = bool(params.get("archived"))
            return {
                "conversations": [
                    c
                    for c in CONVERSATIONS
                    if c["archived"] == archived
                    and all(
                        any(t.startswith(w) for t in str(c["title"]).lower().split()) for w in words
                    )
                ]
            }
        if method == "conversation/usage":
            return self.usage.pop(0)
        if method == "conversation/context":
            usage = self.usage.pop(0)
            system, tools = 1_200, 3_300
            parts = [
                {"kind": "system", "label": "System prompt", "tokens": system},
                {"kind": "summary", "label": "Summary", "tokens": 900, "itemIds": ["s"]},
                {"kind": "history", "label": "Recent history (40 items)", "tokens": 0},
                {"kind": "tools", "label": "Tools: shell, read_file", "tokens": tools},
            ]
            parts[2]["tokens"] = int(usage["used"]) - system - 900 - tools
            omitted = [{"itemIds": ["a", "b", "c"], "reason": "replaced by the summary"}]
            return {"parts": parts, "total": usage["used"], "omitted": omitted, "usage": usage}
        raise AssertionError(f"the fixed client has no answer for {method}")

    async def close(self) -> None:
        pass
