"""The setting of the sandbox attack tests: a real daemon on the places of sandbox_places.py, and
one scripted shell call of the attacker's, whose output the test reads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.tools.sandbox_places import Places
from tests.support.daemon import Daemon
from tests.support.events import completed_items, new_conversation, run_turn


def agent(name: str = "default", sandbox: str = "workspace", approval: str = "never") -> str:
    return f'\n[agents.{name}]\nmodel = "fake"\nsandbox = "{sandbox}"\napproval = "{approval}"\n'


@contextmanager
def running_daemon(places: Places, config: str) -> Iterator[Daemon]:
    """A daemon whose config.toml is `config`, stopped afterwards."""
    places.config.write_text(config)
    started = Daemon(home=places.data, config_path=places.config, workdir=places.work)
    started.start()
    try:
        yield started
    finally:
        started.stop()


async def shell_call(
    daemon: Daemon, fake: FakeProvider, command: str, cwd: str, **create: str
) -> str:
    """Run `command` as the model's one tool call of a new conversation at `cwd`; its output."""
    fake.enqueue(Reply().tool_call("shell", {"command": command}), Reply().text("done"))
    client = await daemon.client()
    cid = await new_conversation(client, cwd, **create)
    # At `/` (and any tree too large to snapshot) the first shell call waits for the checkpoint
    # survey to pass its cap (about a second), at most `survey_wait_s` (2 s): room under load.
    notes = await run_turn(client, cid, "go", within=50)
    await client.close()
    [output] = [item["output"] for item in completed_items(notes, "tool_result")]
    return str(output)
