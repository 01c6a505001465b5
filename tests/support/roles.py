"""Which agent a recorded provider request came from: tests give each agent `instructions`
starting with `ROLE: name`, a line of the system prompt after the base prompt
(docs/configuration.md, "What the model is told")."""

from __future__ import annotations

from typing import Any


def role(request: Any) -> str:
    """The `name` of the `ROLE: name` line of a Chat Completions request's system message."""
    for message in request.json["messages"]:
        if message["role"] == "system":
            for line in str(message["content"]).splitlines():
                if line.startswith("ROLE: "):
                    return line.removeprefix("ROLE: ")
    return ""
