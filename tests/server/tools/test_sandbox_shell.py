"""The shell tool under each sandbox mode, with real bubblewrap: what each mode promises holds.

workspace: writes only in the working directory (and a private /tmp); read-only: no writes but
/tmp; off: writes anywhere. In every mode the daemon's data directory and config stay hidden, the
API keys and OPENVAALA_* variables stay out of the environment, and nothing a command starts
outlives its call. The network is reachable only when the confinement allows it.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import stat
from collections.abc import AsyncIterator

import pytest

from openvaala_server.domain.permissions import Confinement, SandboxMode
from openvaala_server.tools import sandbox
from openvaala_server.tools.base import ToolContext, ToolResult
from openvaala_server.tools.shell import ShellTool
from tests.server.tools.processes import survivors
from tests.server.tools.sandbox_places import SECRET_KEY, TOKEN, Places

MODES: list[SandboxMode] = ["workspace", "read-only", "off"]


async def shell(
    places: Places, command: str, confinement: Confinement, **arguments: object
) -> ToolResult:
    ctx = ToolContext(cwd=places.work, emit_output=lambda _: None, confinement=confinement)
    return await ShellTool().run({"command": command, **arguments}, ctx)


@pytest.mark.parametrize("mode", MODES)
async def test_writes_outside_the_workspace(places: Places, mode: SandboxMode) -> None:
    target = places.outside / "file.txt"
    result = await shell(places, f"echo changed > {target}", places.confinement(mode))
    if mode == "off":
        assert not result.is_error
        assert target.read_text() == "changed\n"
    else:
        assert result.is_error
        assert "Read-only file system" in result.output
        assert target.read_text() == "original\n"


@pytest.mark.parametrize("mode", MODES)
async def test_writes_through_a_symlink_pointing_outside(places: Places, mode: SandboxMode) -> None:
    result = await shell(places, "echo changed > link.txt", places.confinement(mode))
    expected = "changed\n" if mode == "off" else "original\n"
    assert (places.outside / "file.txt").read_text() == expected
    assert result.is_error == (mode != "off")


@pytest.mark.parametrize("mode", MODES)
async def test_writes_inside_the_workspace(places: Places, mode: SandboxMode) -> None:
    result = await shell(places, "echo new > made.txt; cat made.txt", places.confinement(mode))
    if mode == "read-only":
        assert "Read-only file system" in result.output
        assert not (places.work / "made.txt").exists()
    else:
        assert result.output.startswith("new\n")
        assert (places.work / "made.txt").read_text() == "new\n"


def remove_if_there(path: str) -> bool:
    """Whether `path` existed; it no longer does."""
    try:
        os.remove(path)
    except FileNotFoundError:
        return False
    return True


@pytest.mark.parametrize("mode", MODES)
async def test_a_symlinked_working_directory(places: Places, mode: SandboxMode) -> None:
    linked = places.root / "linked-work"
    linked.symlink_to(places.work)
    ctx = ToolContext(cwd=linked, emit_output=lambda _: None, confinement=places.confinement(mode))
    result = await ShellTool().run({"command": "pwd; echo x > via-link.txt"}, ctx)
    assert result.output.startswith(f"{linked}\n")
    assert (places.work / "via-link.txt").exists() == (mode != "read-only")


@pytest.mark.parametrize("mode", MODES)
async def test_tmp_is_private_and_writable(places: Places, mode: SandboxMode) -> None:
    scratch = f"/tmp/openvaala-test-{secrets.token_hex(4)}"
    command = f"echo x > {scratch} && cat {scratch}"
    result = await shell(places, command, places.confinement(mode))
    assert result.output.startswith("x\n")
    # Sandboxed, /tmp is the call's own and is gone with it; "off" writes the real one.
    assert remove_if_there(scratch) == (mode == "off")


@pytest.mark.parametrize("mode", MODES)
async def test_the_token_and_config_are_hidden(places: Places, mode: SandboxMode) -> None:
    command = (
        f"cat {places.token}; cat token-link; cat {places.config}; ls -A {places.data}; "
        f"echo leak > {places.data}/planted"
    )
    result = await shell(places, command, places.confinement(mode))
    assert TOKEN not in result.output
    assert "agents" not in result.output
    assert not (places.data / "planted").exists()


@pytest.mark.parametrize("mode", MODES)
async def test_api_keys_and_daemon_variables_are_not_in_the_environment(
    places: Places, mode: SandboxMode, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOME_API_KEY", SECRET_KEY)
    monkeypatch.setenv("OPENVAALA_SOMETHING", SECRET_KEY)
    monkeypatch.setenv("HARMLESS_SETTING", "kept")
    result = await shell(
        places,
        'echo "[$SOME_API_KEY][$OPENVAALA_SOMETHING][$HARMLESS_SETTING]"; env',
        places.confinement(mode),
    )
    assert result.output.startswith("[][][kept]\n")
    assert SECRET_KEY not in result.output


@pytest.fixture
async def listener() -> AsyncIterator[int]:
    """A TCP server on 127.0.0.1 that greets whoever connects; yields its port."""

    async def greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello from the host\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(greet, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize(
    ("mode", "network"),
    [
        ("workspace", False),
        ("workspace", True),
        ("read-only", False),
        ("read-only", True),
        ("off", True),
    ],
)
async def test_the_network_only_when_allowed(
    places: Places, listener: int, mode: SandboxMode, network: bool
) -> None:
    command = f"exec 3<>/dev/tcp/127.0.0.1/{listener} && cat <&3"
    result = await shell(places, command, places.confinement(mode, network=network))
    if network:
        assert result.output.startswith("hello from the host\n")
    else:
        assert "hello" not in result.output
        assert result.is_error
        assert "no network" in result.output  # the hint names the likely cause


@pytest.mark.parametrize("mode", MODES)
async def test_nothing_started_outlives_the_call(places: Places, mode: SandboxMode) -> None:
    mark = f"100.{secrets.randbelow(10**6):06d}"
    command = (
        f"setsid sleep {mark} >/dev/null 2>&1 < /dev/null & "
        f"nohup sleep {mark} >/dev/null 2>&1 & "
        f"( ( sleep {mark} >/dev/null 2>&1 & ) & ); "
        "sleep 0.2; echo started"
    )
    result = await shell(places, command, places.confinement(mode))
    assert result.output.startswith("started\n")
    assert survivors(mark) == []


async def test_a_sandboxed_failure_says_how_to_ask_past_the_sandbox(places: Places) -> None:
    result = await shell(places, f"touch {places.outside}/x", places.confinement("workspace"))
    assert result.is_error
    assert "outside_sandbox=true" in result.output
    assert "justification" in result.output
    off = await shell(places, "false", places.confinement("off"))
    assert off.is_error and "sandbox" not in off.output


async def test_asking_to_leave_the_sandbox_is_not_leaving_it(places: Places) -> None:
    # Only the runtime, with the user's approval, runs a call outside (as mode "off").
    result = await shell(
        places,
        f"touch {places.outside}/x",
        places.confinement("workspace"),
        outside_sandbox=True,
        justification="needs to write outside",
    )
    assert result.is_error
    assert "not granted" in result.output
    assert not (places.outside / "x").exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"outside_sandbox": "yes"}, "'outside_sandbox' must be a boolean, got string"),
        ({"justification": 3}, "'justification' must be a string, got integer"),
    ],
)
async def test_bad_sandbox_arguments(
    places: Places, arguments: dict[str, object], message: str
) -> None:
    result = await shell(places, "true", places.confinement("workspace"), **arguments)
    assert result.is_error and message in result.output


@pytest.mark.parametrize("mode", ["workspace", "read-only"])
async def test_missing_bwrap_fails_sandboxed_calls_with_what_to_do(
    places: Places, mode: SandboxMode, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(sandbox.BWRAP_ENV, "")
    marker = places.work / "ran"
    result = await shell(places, f"touch {marker}", places.confinement(mode))
    assert result.is_error
    assert "bubblewrap (`bwrap`) is not installed" in result.output
    assert "apt-get install bubblewrap" in result.output
    assert 'sandbox = "off"' in result.output
    assert not marker.exists()  # never run unconfined instead


async def test_bwrap_without_namespaces_fails_with_its_reason(
    places: Places, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = places.root / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(sandbox.BWRAP_ENV, str(fake))
    result = await shell(places, "true", places.confinement("workspace"))
    assert result.is_error
    assert "cannot create a sandbox here" in result.output
    assert "No permissions to create new namespace" in result.output
    assert 'sandbox = "off"' in result.output


async def test_off_without_bwrap_still_runs_and_scrubs_the_environment(
    places: Places, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(sandbox.BWRAP_ENV, "")
    monkeypatch.setenv("SOME_API_KEY", SECRET_KEY)
    result = await shell(places, 'echo "ran [$SOME_API_KEY]"', places.confinement("off"))
    assert result.output.startswith("ran []\n")


async def test_a_working_directory_inside_a_protected_one_is_refused(places: Places) -> None:
    ctx = ToolContext(
        cwd=places.data, emit_output=lambda _: None, confinement=places.confinement("off")
    )
    result = await ShellTool().run({"command": "cat token"}, ctx)
    assert result.is_error
    assert "keeps private" in result.output
    assert TOKEN not in result.output
