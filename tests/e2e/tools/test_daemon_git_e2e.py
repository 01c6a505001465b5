"""The daemon's own `git status` (the branch and changes the model is told, runtime/surroundings.py)
on a repository the agent made: what the repository configures must not run in the daemon.

The attacker's calls are scripted by a fake provider and run under real bubblewrap; the next turn
makes the daemon read the repository's state. A marker file outside the workspace tells whether
the planted program ran with the daemon's rights.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.tools.attacker import agent, running_daemon
from tests.server.tools.sandbox_places import Places
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None or shutil.which("git") is None, reason="needs bwrap and git"
)


@pytest.fixture
def daemon(places: Places, fake_openai: FakeProvider) -> Iterator[Daemon]:
    config = fake_openai.config_toml("fake") + agent(approval="escalate")
    with running_daemon(places, config) as started:
        yield started


def plants(places: Places) -> dict[str, str]:
    """Shell commands that make the working directory a repository whose `git status` runs a
    program: through `core.fsmonitor`, or through a clean filter (a tracked file changed with
    its size kept, so status hashes it through the filter)."""
    mark = places.outside / "planted-ran"
    make = "git init -q . && git config user.email a@b && git config user.name a && "
    return {
        "fsmonitor": make + f"git config core.fsmonitor 'touch {mark}; false' && "
        "echo x > f && git add f && git commit -qm one && echo done",
        "filter": make + f"git config filter.evil.clean 'touch {mark}; cat' && "
        "echo '* filter=evil' > .gitattributes && echo x > f && git add f .gitattributes && "
        f"git commit -qm one && rm -f {mark} && echo y > f && echo done",
    }


@pytest.mark.parametrize("how", ["fsmonitor", "filter"])
async def test_a_repository_made_by_the_agent_runs_nothing_in_the_daemon(
    daemon: Daemon, places: Places, fake_openai: FakeProvider, how: str
) -> None:
    mark = places.outside / "planted-ran"
    fake_openai.enqueue(
        Reply().tool_call("shell", {"command": plants(places)[how]}),
        Reply().text("planted"),
        Reply().text("second turn"),
    )
    client = await daemon.client()
    cid = await new_conversation(client, str(places.work))
    await run_turn(client, cid, "make a repository")
    assert (places.work / ".git").is_dir()  # the plant itself worked (the cwd is writable)
    await run_turn(client, cid, "go on")  # its surroundings: the daemon reads the git state
    await client.close()
    assert not mark.exists(), "the daemon ran a program the repository configured"
    # The model is still told the repository's state.
    told = str(fake_openai.last_request.json)
    assert f"Git: repository {places.work}, branch " in told
    if how == "filter":
        assert " M f" in told  # the status too, not only the branch
