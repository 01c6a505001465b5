"""Custom commands for every client, expanded by the daemon (docs/protocol.md, commands/list and
commands/expand): the user's files beside the config and the project's `.openvaala/commands/`,
the project's winning; `openvaala exec /name args` sends the expansion; an unknown name is a
usage error naming where the files go."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from openvaala_server.client import RpcError
from tests.support.daemon import DEFAULT_CONFIG, Daemon, make_daemon, stop_any_server
from tests.support.events import new_conversation, snapshot_of


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = make_daemon(tmp_path_factory.mktemp("custom"), DEFAULT_CONFIG)
    user = d.config_path.parent / "commands"
    user.mkdir()
    (user / "explain.md").write_text("---\ndescription: Explain simply\n---\nExplain $ARGUMENTS.\n")
    (user / "review.md").write_text("The user's review of $ARGUMENTS.\n")
    project = d.workdir / ".openvaala" / "commands"
    project.mkdir(parents=True)
    (project / "review.md").write_text("# Review\nReview $ARGUMENTS for bugs.\n")
    d.start()
    yield d
    d.stop()
    stop_any_server(d)


async def test_list_and_expand(home: Daemon) -> None:
    client = await home.client()
    try:
        cid = await new_conversation(client, str(home.workdir))
        listed = (await client.request("commands/list", {"conversationId": cid}))["commands"]
        assert listed == [
            {"name": "explain", "description": "Explain simply", "source": "user"},
            {"name": "review", "description": "Review", "source": "project"},
        ]
        params = {"conversationId": cid, "name": "review", "arguments": "lexer.py"}
        expanded = await client.request("commands/expand", params)
        assert expanded == {"text": "# Review\nReview lexer.py for bugs."}
        with pytest.raises(RpcError) as unknown:
            await client.request("commands/expand", {**params, "name": "nope"})
        assert unknown.value.kind == "not_found" and "/explain, /review" in str(unknown.value)
    finally:
        await client.close()


def run_exec(d: Daemon, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "openvaala_server", "exec", *args],
        env=d.env,
        cwd=d.workdir,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_exec_sends_a_custom_command_expanded(home: Daemon) -> None:
    done = run_exec(home, "/explain the parser")
    assert done.returncode == 0, done.stderr
    cid = done.stderr.split("openvaala exec --resume ", 1)[1].split()[0]
    client = await home.client()
    try:
        items = (await snapshot_of(client, cid))["sessions"][0]["items"]
        sent = [i["text"] for i in items if i["type"] == "user_message"]
        assert sent == ["Explain the parser."]
    finally:
        await client.close()
    unknown = run_exec(home, "/nope x")
    assert unknown.returncode == 2
    assert "no custom command /nope" in unknown.stderr and ".openvaala/commands/" in unknown.stderr
