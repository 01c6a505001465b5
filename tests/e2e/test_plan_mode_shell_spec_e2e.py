"""In plan mode the shell tool the model is sent does not offer `outside_sandbox` (plan mode
refuses it), neither in its schema nor in its description, nor under an approval setting of
"never"; outside plan mode it does. Seen at the wire: the fake provider records each request's
tools."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn

Factory = Callable[..., Daemon]


async def shell_sent(
    d: Daemon, fake: FakeProvider, mode: str, agent: str = "default"
) -> dict[str, Any]:
    """The shell tool's function as the model received it, in a conversation in `mode`."""
    fake.enqueue(Reply().text("ok"))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir), agent=agent)
        await client.request(
            "conversation/setPermissionMode", {"conversationId": cid, "mode": mode}
        )
        await run_turn(client, cid, "hello")
    finally:
        await client.close()
    tools = {t["function"]["name"]: t["function"] for t in fake.requests[-1].json["tools"]}
    shell: dict[str, Any] = tools["shell"]
    return shell


async def test_plan_mode_does_not_offer_running_outside_the_sandbox(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(
        fake.config_toml("fake")
        + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\n'
        + '\n[agents.strict]\ndescription = "s"\nmodel = "fake"\napproval = "never"\n'
    )
    planned = await shell_sent(d, fake, "plan")
    assert "outside_sandbox" not in planned["parameters"]["properties"]
    assert "justification" not in planned["parameters"]["properties"]
    assert "outside_sandbox" not in planned["description"]
    assert "none may run outside it" in planned["description"]

    editing = await shell_sent(d, fake, "auto-edit")
    assert editing["parameters"]["properties"]["outside_sandbox"]["type"] == "boolean"
    assert "outside_sandbox=true" in editing["description"]

    # Nobody can allow it under an approval setting of "never" either.
    strict = await shell_sent(d, fake, "auto-edit", agent="strict")
    assert "outside_sandbox" not in strict["parameters"]["properties"]
    assert "none may run outside it" in strict["description"]
