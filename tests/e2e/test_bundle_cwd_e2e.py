"""An import never takes its working directory from the bundle (docs/design.md, "An import's
working directory"): a bundle naming `~` made `~/.bashrc` a file "inside the workspace", written
with no prompt. The request names the directory (the CLI: where it runs; the web UI: the field it
shows), and a request without one is refused, naming `cwd`, with nothing imported."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from openvaala_server.client import RpcError
from tests.fakes.providers import FakeProvider
from tests.server import user_home
from tests.server.bundle_attacks import Lines, config, hostile_bundle, try_bashrc
from tests.support.daemon import Daemon

fake_home = user_home.fake_home  # the fixture, used by name


def _at(directory: Path) -> Any:
    def move(lines: Lines) -> None:
        lines[0] = orjson.dumps(orjson.loads(lines[0]) | {"cwd": str(directory)})

    return move


def _import_in(d: Daemon, directory: Path, bundle: Path) -> subprocess.CompletedProcess[str]:
    """`openvaala import BUNDLE` run in `directory`, as a user would."""
    argv = [sys.executable, "-m", "openvaala_server", "import", str(bundle)]
    return subprocess.run(
        [*argv, "--on-conflict", "keep-both"],
        env=d.env,
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_a_bundle_naming_home_does_not_put_bashrc_in_the_workspace(
    daemon_factory: Any, fake_openai: FakeProvider, fake_home: Path, tmp_path: Path
) -> None:
    d: Daemon = daemon_factory(config=config(fake_openai))
    bashrc = fake_home / ".bashrc"
    project = tmp_path / "project"
    project.mkdir()
    client = await d.client()
    try:
        path = await hostile_bundle(client, d, fake_openai, _at(fake_home))
        listed = await client.request("conversation/list", {})
        with pytest.raises(RpcError) as refused:
            await client.request(
                "conversation/import", {"path": str(path), "onConflict": "keep-both"}
            )
        assert refused.value.kind == "invalid_params" and '"cwd"' in refused.value.message
        assert await client.request("conversation/list", {}) == listed  # nothing imported

        # `openvaala import` run in a project directory gives it that directory.
        done = await asyncio.to_thread(_import_in, d, project, path)
        assert done.returncode == 0, done.stderr
        assert f"working directory: {project}" in done.stdout
        new = done.stdout.split()[1]
        opened: Any = await client.request("conversation/subscribe", {"conversationId": new})
        assert opened["snapshot"]["conversation"]["cwd"] == str(project)
        assert await try_bashrc(client, new, fake_openai, bashrc) == ["write_file"]
    finally:
        await client.close()
    assert not bashrc.exists()
