"""A conversation's directory may be given from the daemon user's home (`~`, `~/x`): the daemon
expands it on its own machine, for `conversation/create` and `conversation/setCwd` alike, as the
web UI's picker does; a relative path, or another user's home, is still `invalid_params` naming
`cwd`. Real daemon whose HOME is a temporary directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openvaala_server.client import RpcError
from tests.support.daemon import DEFAULT_CONFIG, Daemon
from tests.support.events import snapshot_of
from tests.support.running import running_daemon


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("user-home")
    (path / "proj").mkdir()
    (path / "other").mkdir()
    return path


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory, home: Path) -> Iterator[Daemon]:
    with running_daemon(
        tmp_path_factory.mktemp("home-cwd"), DEFAULT_CONFIG, {"HOME": str(home)}
    ) as d:
        yield d


async def test_a_cwd_from_the_home_is_expanded_on_the_daemon(daemon: Daemon, home: Path) -> None:
    client = await daemon.client()
    try:
        made = await client.request("conversation/create", {"cwd": "~/proj"})
        conv = made["conversation"]
        assert conv["cwd"] == str(home / "proj")
        cid = conv["conversationId"]
        await client.request("conversation/setCwd", {"conversationId": cid, "cwd": "~/other/"})
        snapshot = await snapshot_of(client, cid)
        assert snapshot["conversation"]["cwd"] == str(home / "other")
        bare = await client.request("conversation/create", {"cwd": "~"})
        assert bare["conversation"]["cwd"] == str(home)
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("cwd", "why"),
    [
        ("proj", "must be absolute or start with ~"),
        ("./proj", "must be absolute or start with ~"),
        ("~root/x", "not another user's"),
    ],
)
async def test_a_relative_cwd_is_still_refused(daemon: Daemon, cwd: str, why: str) -> None:
    client = await daemon.client()
    try:
        with pytest.raises(RpcError) as refused:
            await client.request("conversation/create", {"cwd": cwd})
        assert refused.value.kind == "invalid_params" and refused.value.data["param"] == "cwd"
        assert why in refused.value.message
    finally:
        await client.close()
