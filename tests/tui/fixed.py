"""A fixed conversation snapshot (no daemon, no clock) for appearance tests."""

from __future__ import annotations

from typing import Any

CID = "0" * 31 + "1"
ROOT = "0" * 31 + "2"
CHILD = "0" * 31 + "3"


def _item(n: int, type_: str, **fields: Any) -> dict[str, Any]:
    return {
        "itemId": f"{n:032x}",
        "type": type_,
        "sessionId": ROOT,
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
            {
                "sessionId": CHILD,
                "parentSessionId": ROOT,
                "agent": "helper",
                "model": "demo",
                "status": "idle",
                "title": "Read the docs",
                "depth": 1,
                "items": [],
                "hasMore": False,
                "turn": None,
                "inbox": [],
                "usage": {},
            },
        ],
    }
