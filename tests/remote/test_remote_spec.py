"""`--remote [user@]host[:dir]`: parsing, the ssh command line, and the errors that name the step
to take (client/remote.py, remote/cli.py), in process."""

from __future__ import annotations

from pathlib import Path

import pytest

from openvaala_server.cli import main
from openvaala_server.client.remote import (
    Banner,
    Dialer,
    Remote,
    RemoteUnavailable,
    explain,
    parse,
    ssh_command,
)


def test_a_spec_names_the_destination_and_the_remote_directory() -> None:
    assert parse("me@box:~/src/app") == Remote("me@box", "~/src/app")
    assert parse("box").directory is None and parse("me@box").host == "box"
    for bad in ("", ":dir", "-oProxyCommand=x", "a b"):
        with pytest.raises(ValueError, match=r"expected \[user@\]host\[:dir\]"):
            parse(bad)


def test_the_users_ssh_runs_the_bridge_quoted_for_the_remote_shell() -> None:
    env = {"OPENVAALA_SSH_COMMAND": "ssh -F '/tmp/my config'", "OPENVAALA_REMOTE_PROGRAM": "/o v"}
    command = ssh_command(parse("box"), "bridge", environ=env)
    assert command == [
        "ssh",
        "-F",
        "/tmp/my config",
        "-T",
        "-e",
        "none",
        "--",
        "box",
        "'/o v' bridge",
    ]


def test_a_failed_bridge_says_which_step_is_missing() -> None:
    box = parse("me@box")
    assert "not installed on box" in explain(box, 127, "bash: openvaala: command not found")
    assert explain(box, 255, "Permission denied (publickey).") == (
        "ssh could not connect to me@box: Permission denied (publickey)."
    )
    assert "the bridge on box failed (exit 1)" in explain(box, 1, "no daemon")
    # The bridge ran (so openvaala is there) and names a file of its own that is missing.
    said = "openvaala bridge: cannot reach the daemon: [Errno 2] No such file or directory: '/d'"
    assert explain(box, 1, said).startswith("the bridge on box failed (exit 1)")


def test_remote_is_refused_where_it_means_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--remote", "box", "serve", "status"])
    assert exited.value.code == 2
    assert "--remote does not apply to `openvaala serve`" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["exec", "--remote=-x", "hi"])
    assert "expected [user@]host[:dir]" in capsys.readouterr().err


def test_a_tilde_directory_is_the_remote_home_not_a_folder_named_tilde() -> None:
    dialer = Dialer(parse("me@box:~/src/app"))
    dialer.banner = Banner("127.0.0.1:7450", "/home/me", 1)
    # docs/remote.md's own example, `exec --remote HOST:~/project`: no shell expands it there.
    assert dialer.resolve("~/src/app") == "/home/me/src/app"
    assert dialer.resolve("~") == "/home/me"
    assert dialer.resolve("src") == "/home/me/src"
    assert dialer.resolve(None) == "/home/me"
    assert dialer.resolve("/srv/app") == "/srv/app"


def test_openvaala_remote_in_the_environment_keeps_web_sessions_off_this_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENVAALA_HOME", str(tmp_path))
    monkeypatch.setenv("OPENVAALA_REMOTE", "box")  # as `--remote box` would, for a whole shell
    for flags in (["--logout-all"], ["--sessions"], ["--end", "abc"]):
        with pytest.raises(SystemExit) as exited:
            main(["web", *flags])
        assert exited.value.code == 2
        assert "manage the browser sessions of that machine there" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing of this machine's was looked at


async def test_a_banner_missing_a_field_is_a_clear_error_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another bridge version (or anything else printing `{"bridge": 1}`) must not end the
    # client with a KeyError: the dial fails, naming what was wrong.
    fake_ssh = tmp_path / "ssh"
    fake_ssh.write_text(
        '#!/bin/sh\necho \'{"bridge": 1, "address": "127.0.0.1:1"}\'\ncat >/dev/null\n'
    )
    fake_ssh.chmod(0o755)
    monkeypatch.setenv("OPENVAALA_SSH_COMMAND", str(fake_ssh))
    with pytest.raises(RemoteUnavailable, match="lacks its address, home or pid"):
        await Dialer(parse("box")).open()


def test_a_malformed_openvaala_remote_is_named_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENVAALA_REMOTE", "-oProxyCommand=x")
    for argv in (["list"], ["exec", "hi"], []):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
        said = capsys.readouterr().err
        assert "$OPENVAALA_REMOTE: --remote '-oProxyCommand=x': expected [user@]host[:dir]" in said
