"""`openvaala web --remote HOST` signs this machine's Chromium in to the remote daemon's web UI,
through an ssh port forward, with no secret on any command line, and forwards again when ssh
drops (docs/remote.md, "The browser")."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import sync_playwright

from tests.support.daemon import Daemon
from tests.support.sshd import Sshd
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS


def _command_lines() -> str:
    """Every process's command line on this machine (where "both machines" run here)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except (OSError, UnicodeDecodeError):
                continue
    return "\n".join(found)


def _tcp_listeners_of_ssh(marker: str) -> list[str]:
    """The TCP ports the local `ssh` processes of the test's config listen on."""
    inodes: set[str] = set()
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if not argv[0].endswith(b"ssh") or marker.encode() not in argv:
                continue
            for fd in (entry / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except (OSError, ValueError):
            continue
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                ports.append(fields[1])
    return ports


def _start_web(env: dict[str, str], tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    """`openvaala web` (`--remote` is in `env`), its browser a script noting the URL it got."""
    argv_file = tmp_path / "browser-argv"
    fake_browser = tmp_path / "browser.sh"
    fake_browser.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" > {argv_file}.tmp\nmv {argv_file}.tmp {argv_file}\n'
    )
    fake_browser.chmod(0o755)
    web = subprocess.Popen(
        [sys.executable, "-m", "openvaala_server", "web"],
        env={**env, "BROWSER": f"{fake_browser} %s"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return web, argv_file


def _wait_for_the_browser(web: subprocess.Popen[str], argv_file: Path) -> None:
    deadline = time.monotonic() + 60
    while not argv_file.exists():  # the browser script ran: the forward is up
        assert web.poll() is None, web.communicate()
        assert time.monotonic() < deadline, "web --remote did not open the browser"
        time.sleep(0.05)


@pytest.mark.timeout(120)  # Chromium's start, and a reconnection after the dropped ssh
def test_web_remote_signs_the_local_browser_in_through_a_forward(
    client_env: dict[str, str], sshd: Sshd, remote: Daemon, local: Daemon, tmp_path: Path
) -> None:
    web, argv_file = _start_web(client_env, tmp_path)
    try:
        _wait_for_the_browser(web, argv_file)
        url = argv_file.read_text().split()[-1]
        sign_in = Path(urlsplit(url).path)
        assert sign_in.is_relative_to(local.home)  # the sign-in file is here, private
        assert sign_in.stat().st_mode & 0o777 == 0o600
        code = re.search(r'name="code" value="([^"]+)"', sign_in.read_text())
        assert code is not None
        remote_token = remote.data_dir.token_path.read_text().strip()
        lines = _command_lines()
        assert code[1] not in lines and remote_token not in lines
        # The forward is a socket only this user reaches: no TCP port any other user of this
        # machine could connect to (or take first, and be handed the browser's sign-in).
        assert _tcp_listeners_of_ssh(client_env["OPENVAALA_SSH_COMMAND"].split()[-1]) == []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                page.goto(url)
                page.wait_for_selector("body[data-connection='online']", timeout=30000)
                assert urlsplit(page.url).path.startswith("/s/")
                # The page names the machine it is attached to (the daemon's, over there).
                machine = page.wait_for_selector("#machine:not([hidden])", timeout=30000)
                assert machine is not None
                assert machine.text_content() == f"on {socket.gethostname()}"
                # ssh drops (the forward's ssh killed): the command forwards again and the
                # page, still signed in, comes back online by itself.
                assert sshd.kill_clients() >= 1
                page.wait_for_selector("body:not([data-connection='online'])", timeout=30000)
                page.wait_for_selector("body[data-connection='online']", timeout=60000)
            finally:
                browser.close()
    finally:
        if web.poll() is None:
            web.send_signal(signal.SIGTERM)
        out, err = web.communicate(timeout=30)
    assert web.returncode == 0, err
    assert "forwarded by ssh" in out
    assert "forward to remotebox dropped; opening it again" in err
    # No file here holds the remote machine's token.
    for path in local.home.rglob("*"):
        assert not path.is_file() or remote_token.encode() not in path.read_bytes()
    assert os.environ.get("OPENVAALA_REMOTE") is None


def test_web_remote_keeps_serving_when_ssh_multiplexes(
    client_env: dict[str, str], sshd: Sshd, tmp_path: Path
) -> None:
    """With a ControlMaster in the user's ssh set-up, the forward still stays up and the command
    with it (a master would take the forward over, and its `ssh -N -L` end at once)."""
    control = Path(tempfile.mkdtemp(prefix="cm-", dir="/tmp"))  # a short path: a socket's
    master = f"-o ControlMaster=auto -o ControlPath={control}/%C -o ControlPersist=30"
    ssh = f"{client_env['OPENVAALA_SSH_COMMAND']} {master}"
    web, argv_file = _start_web({**client_env, "OPENVAALA_SSH_COMMAND": ssh}, tmp_path)
    try:
        _wait_for_the_browser(web, argv_file)
        page = Path(urlsplit(argv_file.read_text().split()[-1]).path).read_text()
        action = re.search(r'action="(http://127\.0\.0\.1:\d+)/login"', page)
        assert action is not None
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with direct.open(f"{action[1]}/healthz", timeout=30) as answer:
            assert answer.status == 200
        # The master ends (ControlPersist runs out, `ssh -O exit`): the forward is not its.
        stopped = subprocess.run(
            [*ssh.split(), "-O", "exit", "remotebox"], capture_output=True, timeout=30, check=False
        )
        assert stopped.returncode == 0, stopped.stderr
        with direct.open(f"{action[1]}/healthz", timeout=30) as answer:
            assert answer.status == 200
        assert web.poll() is None  # still serving the browser
    finally:
        if web.poll() is None:
            web.send_signal(signal.SIGTERM)
        _, err = web.communicate(timeout=30)
        subprocess.run(
            [*ssh.split(), "-O", "exit", "remotebox"], capture_output=True, timeout=30, check=False
        )
        shutil.rmtree(control, ignore_errors=True)
    assert web.returncode == 0, err
    assert "dropped" not in err  # the forward ssh ran until it was stopped
