"""Ways around a call's limits (docs/security.md, "Limits of a command"): bubblewrap's `--dev`
makes a /dev/shm of half the RAM, outside `limits.tmp_mb`; a writable /sys/fs/cgroup lets a call
move itself out of the control group that counts its processes and memory.

Real bubblewrap and daemon; a fake provider scripts the attacker's commands.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.fakes.providers import FakeProvider
from tests.server.tools.attacker import agent, running_daemon, shell_call
from tests.server.tools.sandbox_places import Places
from tests.support.daemon import Daemon

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bwrap")

LIMITED = "limits = { tmp_mb = 5 }\n"


@pytest.fixture
def daemon(places: Places, fake_openai: FakeProvider) -> Iterator[Daemon]:
    agents = agent() + LIMITED + agent("ops", sandbox="off") + LIMITED
    with running_daemon(places, fake_openai.config_toml("fake") + agents) as started:
        yield started


async def run_command(
    daemon: Daemon, places: Places, fake: FakeProvider, command: str, agent_name: str
) -> str:
    return await shell_call(daemon, fake, command, str(places.work), agent=agent_name)


async def test_dev_shm_is_bounded_by_tmp_mb(
    daemon: Daemon, places: Places, fake_openai: FakeProvider
) -> None:
    command = (
        "head -c 50000000 /dev/zero > /dev/shm/big; ls -l /dev/shm/big | awk '{print \"SIZE:\" $5}'"
    )
    output = await run_command(daemon, places, fake_openai, command, "default")
    assert "No space left on device" in output
    size = int(output.split("SIZE:")[1].split()[0])
    assert size <= 5 * 1024 * 1024


@pytest.mark.parametrize("agent", ["default", "ops"])
async def test_a_call_cannot_leave_its_control_groups(
    daemon: Daemon, places: Places, fake_openai: FakeProvider, agent: str
) -> None:
    command = (
        "for f in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs; do "
        '[ -e "$f" ] && echo $$ > "$f" && echo "LEFT:$f"; done; echo end'
    )
    output = await run_command(daemon, places, fake_openai, command, agent)
    assert "end" in output
    assert "LEFT:" not in output
