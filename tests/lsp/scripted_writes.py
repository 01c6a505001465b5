"""The scripted turns the editor tests of approvals share: a daemon whose agent asks before
every tool call (`ROLE: root`, so the provider's replies go to it and not to the title request),
and what the model was sent."""

from __future__ import annotations

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.roles import role


def ask_always_config(fake: FakeProvider) -> str:
    return (
        fake.config_toml("fake")
        + '\n[agents.default]\ndescription = "test"\nmodel = "fake"\napproval = "always"\n'
        + 'instructions = "ROLE: root"\n'
    )


def enqueue_for_root(fake: FakeProvider, *replies: Reply) -> None:
    """`replies` for the agent's turns; any other request (a title) gets a short answer."""
    fake.enqueue(*replies, when=lambda q: role(q) == "root")
    fake.enqueue(*[Reply().text("A title") for _ in range(3)], when=lambda q: role(q) != "root")


def panel_turns(fake: FakeProvider) -> None:
    """A rendered reply, then a write accepted and a write rejected."""
    enqueue_for_root(
        fake,
        Reply()
        .reasoning("weighing it")
        .text("# Findings\n\n", "Some **bold** words.\n\n", "```python\nprint('hi')\n```\n"),
        Reply().tool_call("write_file", {"path": "accepted.txt", "content": "yes\n"}),
        Reply().text("wrote it"),
        Reply().tool_call("write_file", {"path": "rejected.txt", "content": "no\n"}),
        Reply().text("not written"),
    )


def user_texts_sent(fake: FakeProvider) -> list[str]:
    """Every user message the agent's model requests carried."""
    return [
        str(m["content"])
        for r in fake.requests
        if role(r) == "root"
        for m in r.json["messages"]
        if m["role"] == "user"
    ]
