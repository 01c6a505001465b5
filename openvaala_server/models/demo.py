"""The built-in offline demo model: deterministic, no network, no key.

It shows the whole loop working in a minute:
- `run: <command>` — calls the `shell` tool, then describes what the command printed;
- `spawn: <task>` — starts a subagent with `spawn_agent` (the first configured agent) on the task;
- `think: <text>` — streams some reasoning before answering;
- `call: <tool> <JSON arguments>` — calls any tool the agent has (`call: mcp__docs__search
  {"query": "x"}`, `call: update_plan {"plan": [...]}`), then describes its result;
- anything else — a short reply, streamed word by word.
It reports token usage the way a real provider does (estimated from the request it got).
The pace between words is `pace_ms` in the model's config (0 for tests that want it instant).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from openvaala_server.config import ModelConfig
from openvaala_server.domain import images
from openvaala_server.domain.records import TOOL_RESULT, USER_MESSAGE, Item
from openvaala_server.domain.usage import estimate_item, estimate_text
from openvaala_server.models.base import (
    ModelEvent,
    ModelRequest,
    ReasoningDelta,
    ReasoningDone,
    StreamEnded,
    TextDelta,
    ToolCallRequested,
    ToolSpec,
    UsageReported,
)
from openvaala_server.protocol import codec
from openvaala_server.protocol.json_types import JsonObject


class DemoProvider:
    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        pace = config.options.get("pace_ms", 30)
        self.pace_s = float(pace) / 1000 if isinstance(pace, int | float) else 0.03

    def retire(self) -> None:
        """Nothing to release: the demo model holds no connections."""

    async def aclose(self) -> None:
        """Nothing to release: the demo model holds no connections."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        input_tokens = estimate_text(request.instructions) + sum(
            estimate_item(i) for i in request.items
        )
        if request.purpose == "compaction":
            # The last item is the request to summarize, not part of the conversation.
            reply = "Summary of the conversation so far: " + _summarize(request.items[:-1])
            async for event in self._words(reply):
                yield event
            yield UsageReported(input_tokens, estimate_text(reply))
            yield StreamEnded()
            return
        last = request.items[-1] if request.items else {}
        prompt = _last_user_text(request.items)
        if last.get("type") == TOOL_RESULT:
            reply = _describe_result(last)
        elif prompt.startswith("spawn:") and (spawn := _tool(request, "spawn_agent")):
            agents = _agent_names(spawn)
            task = prompt.removeprefix("spawn:").strip() or "say hello"
            arguments: JsonObject = {"agent": agents[0] if agents else "default", "task": task}
            yield ToolCallRequested(
                call_id=f"demo-{len(request.items)}",
                name="spawn_agent",
                arguments=arguments,
                arguments_text=str(arguments),
            )
            yield UsageReported(input_tokens, estimate_text(task) + 10)
            yield StreamEnded("tool_calls")
            return
        elif prompt.startswith("call:") and (called := _called(prompt, request)):
            name, arguments, text = called
            yield ToolCallRequested(
                call_id=f"demo-{len(request.items)}",
                name=name,
                arguments=arguments,
                arguments_text=text,
            )
            yield UsageReported(input_tokens, estimate_text(text) + 10)
            yield StreamEnded("tool_calls")
            return
        elif prompt.startswith("run:") and _tool(request, "shell"):
            command = prompt.removeprefix("run:").strip()
            yield ToolCallRequested(
                call_id=f"demo-{len(request.items)}",
                name="shell",
                arguments={"command": command},
                arguments_text=f'{{"command": {command!r}}}',
            )
            yield UsageReported(input_tokens, estimate_text(command) + 10)
            yield StreamEnded("tool_calls")
            return
        else:
            if prompt.startswith("think:"):
                thought = (
                    f"The user asked me to think about: {prompt.removeprefix('think:').strip()}"
                )
                for word in _split_words(thought):
                    await self._pause()
                    yield ReasoningDelta(word)
                yield ReasoningDone(thought)
            reply = _reply_to(prompt) + _images_seen(request)
        async for event in self._words(reply):
            yield event
        yield UsageReported(input_tokens, estimate_text(reply))
        yield StreamEnded()

    async def _words(self, text: str) -> AsyncIterator[ModelEvent]:
        for word in _split_words(text):
            await self._pause()
            yield TextDelta(word)

    async def _pause(self) -> None:
        # Always yield to the loop, even at pace 0, so an interrupt can land between words.
        await asyncio.sleep(self.pace_s)


def _tool(request: ModelRequest, name: str) -> ToolSpec | None:
    return next((t for t in request.tools if t.name == name), None)


def _agent_names(spawn: ToolSpec) -> list[str]:
    """The agents `spawn_agent` offers (the enum of its `agent` parameter)."""
    properties = spawn.parameters.get("properties")
    agent = properties.get("agent") if isinstance(properties, dict) else None
    names = agent.get("enum") if isinstance(agent, dict) else None
    return [name for name in names if isinstance(name, str)] if isinstance(names, list) else []


def _called(prompt: str, request: ModelRequest) -> tuple[str, JsonObject, str] | None:
    """`call: NAME {json}` naming a tool the request offers: (name, arguments, their text)."""
    name, _, text = prompt.removeprefix("call:").strip().partition(" ")
    if _tool(request, name) is None:
        return None
    try:
        arguments = codec.parse_text(text or "{}")
    except ValueError:
        return None
    return (name, arguments, text or "{}") if isinstance(arguments, dict) else None


def _split_words(text: str) -> list[str]:
    words = text.split(" ")
    return [w + " " for w in words[:-1]] + [words[-1]]


def _last_user_text(items: list[Item]) -> str:
    for item in reversed(items):
        if item.get("type") == USER_MESSAGE:
            return str(item.get("text") or "").strip()
    return ""


def _images_seen(request: ModelRequest) -> str:
    """What the demo says of the last user message's images: their kind and size, and whether
    their data reached it (a model with vision gets the data)."""
    for item in reversed(request.items):
        if item.get("type") == USER_MESSAGE:
            refs = images.refs_of(item.get("images"))
            seen = [
                f"{ref['mediaType']} of {ref['size']} bytes"
                + ("" if ref["sha256"] in request.images else " (data not received)")
                for ref in refs
            ]
            return f" I received {len(refs)} image(s): {', '.join(seen)}." if refs else ""
    return ""


def _reply_to(prompt: str) -> str:
    first_line = prompt.splitlines()[0] if prompt else ""
    return (
        f"You said: “{first_line[:200]}”. I am OpenVaala's offline demo model, so I can only echo "
        "and run commands: try `run: ls` to watch me call the shell tool. Configure a real model "
        "in config.toml to do real work."
    )


def _describe_result(result: Item) -> str:
    output = str(result.get("output") or "").strip()
    if len(output) > 500:
        output = output[:500] + " …"
    if result.get("name") == "spawn_agent":
        return f"I started a subagent; it will report back when it finishes its turn. ({output})"
    status = "failed" if result.get("isError") else "finished"
    if result.get("name") not in (None, "shell"):
        return f"The {result.get('name')} call {status}. It returned:\n\n```\n{output}\n```"
    return f"The command {status}. It printed:\n\n```\n{output}\n```"


def _summarize(items: list[Item]) -> str:
    texts = [str(i.get("text")) for i in items if i.get("type") == USER_MESSAGE and i.get("text")]
    return "; ".join(t[:60] for t in texts[-10:]) or "(nothing yet)"
