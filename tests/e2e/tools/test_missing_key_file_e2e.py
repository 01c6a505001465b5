"""A model's `api_key_file` that does not exist yet (named in config.toml before `openvaala setup`
writes it) must be as hidden as one that does: otherwise a tool creates it, and the key the user
stores next goes into a file the agent made, or through a link it planted (docs/security.md,
"What is hidden in every mode").

Real bubblewrap and daemon; a fake provider scripts the attacker's commands. The key file lies
inside the workspace, where a `workspace` command may write, and in a directory that does not
exist yet.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.providers import FakeProvider
from tests.server.tools.attacker import agent, running_daemon, shell_call
from tests.server.tools.sandbox_places import Places
from tests.support.daemon import Daemon

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bwrap")


def key_file(places: Places) -> Path:
    return places.work / "keys" / "other.key"


@pytest.fixture
def daemon(places: Places, fake_openai: FakeProvider) -> Iterator[Daemon]:
    other = (
        '\n[models.other]\nprovider = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
        f"api_key_file = {json.dumps(str(key_file(places)))}\n"
    )
    with running_daemon(places, fake_openai.config_toml("fake") + other + agent()) as started:
        yield started


async def test_a_key_file_not_written_yet_cannot_be_made_by_a_tool(
    daemon: Daemon, places: Places, fake_openai: FakeProvider
) -> None:
    key = key_file(places)
    command = (
        f"mkdir -p {key.parent}; echo planted > {key}; "
        f"rm -f {key}; ln -s {places.work}/stolen {key}; echo tried"
    )
    output = await shell_call(daemon, fake_openai, command, str(places.work))
    assert "tried" in output
    assert not key.is_symlink()
    assert key.is_file() and key.read_text() == ""  # made empty by the daemon, 0600
    assert key.stat().st_mode & 0o777 == 0o600
