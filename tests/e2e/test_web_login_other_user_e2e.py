"""Attack 7 of issue 32: another local user watching `/proc/*/cmdline` while `openvaala web` opens
the browser never sees a sign-in code, cannot read the file the browser opens, and a code that
reached them anyway is refused from their process without being used up (docs/security.md,
"The browser")."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.support.daemon import Daemon

WAIT_S = 60.0

# Run as the other user: print every new command line in /proc (once), try to read every sign-in
# file named on one, and stop when the test closes stdin.
POLLER = r"""
import os, sys, threading
threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
seen = set()
first = True
while True:
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                line = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if not line or line in seen:
            continue
        seen.add(line)
        print("CMDLINE " + line, flush=True)
        for word in line.split():
            if word.startswith("file://") and "sign-in-" in word:
                try:
                    print("CONTENT " + open(word[len("file://"):]).read(), flush=True)
                except OSError as exc:
                    print("DENIED " + type(exc).__name__, flush=True)
    if first:
        print("READY", flush=True)
        first = False
"""

# Run as the other user: post a code (read from stdin, never on a command line) to /login.
POSTER = r"""
import sys, urllib.error, urllib.parse, urllib.request
url, code = sys.stdin.read().split()
body = urllib.parse.urlencode({"code": code}).encode()
try:
    print(urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=30).status)
except urllib.error.HTTPError as exc:
    print(exc.code)
"""


@pytest.fixture
def other_user() -> Iterator[str]:
    if os.geteuid() != 0:
        pytest.skip("needs root to create a second local user (useradd)")
    if not (shutil.which("useradd") and shutil.which("runuser")):
        pytest.skip("useradd and runuser are needed to act as a second local user")
    name = f"ovpeek{secrets.token_hex(3)}"
    subprocess.run(
        ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        check=True,
        capture_output=True,
    )
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], check=False, capture_output=True)


def _as_user(user: str, script: str) -> list[str]:
    return ["runuser", "-u", user, "--", "/usr/bin/python3", "-c", script]


class Poller:
    """The other user's /proc watcher, its output gathered by a thread."""

    def __init__(self, user: str) -> None:
        self.lines: list[str] = []
        self.changed = threading.Condition()
        self.process = subprocess.Popen(
            _as_user(user, POLLER),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd="/",
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()

    def wait_for(self, pattern: str) -> str:
        with self.changed:
            found = self.changed.wait_for(
                lambda: next((x for x in self.lines if re.search(pattern, x)), None), WAIT_S
            )
        # Not the lines themselves: they are every command line on the machine.
        assert found, f"the watcher never reported {pattern!r} ({len(self.lines)} lines)"
        return str(found)

    def stop(self) -> list[str]:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(WAIT_S)
        self.reader.join(WAIT_S)
        assert self.process.stdout is not None
        self.process.stdout.close()
        with self.changed:
            return list(self.lines)


def _code_given_to(url: str) -> str:
    """The code the browser was started with: in the file it opens (or in its address)."""
    parts = urlsplit(url)
    if parts.scheme != "file":
        return parse_qs(parts.query)["code"][0]
    match = re.search(r'name="code" value="([^"]+)"', Path(parts.path).read_text())
    assert match is not None
    return match[1]


def test_a_second_local_user_never_sees_or_uses_a_sign_in_code(
    daemon: Daemon, other_user: str, tmp_path: Path
) -> None:
    poller = Poller(other_user)
    try:
        poller.wait_for("^READY$")
        # The browser: records its command line, then stays open until the watcher has seen it
        # (a real browser lives on; this one must live long enough to be watched).
        seen = tmp_path / "browser-was-seen"
        argv_file = tmp_path / "browser-argv"
        browser = tmp_path / "fake-browser.sh"
        browser.write_text(
            "#!/bin/sh\n"
            f'printf "%s\\n" "$@" > {argv_file}\n'
            f"i=0; while [ ! -e {seen} ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"
        )
        browser.chmod(0o755)
        cli = subprocess.Popen(
            [sys.executable, "-m", "openvaala_server", "web"],
            env={**daemon.env, "BROWSER": f"{browser} %s"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        poller.wait_for(re.escape(str(browser)))
        seen.touch()
        _, err = cli.communicate(timeout=WAIT_S)
        assert cli.returncode == 0, err
    finally:
        lines = poller.stop()

    url = argv_file.read_text().split()[-1]
    code = _code_given_to(url)
    # Everything the other user saw: command lines (the browser's among them), no code, no token.
    ours = [line for line in lines if str(tmp_path) in line or "openvaala" in line]
    assert any(str(browser) in line and url in line for line in lines), ours
    assert not [line for line in lines if code in line or daemon.token in line]
    # The file named on the browser's command line is not theirs to read.
    assert "DENIED PermissionError" in lines and not [x for x in lines if x.startswith("CONTENT")]

    # Had the code leaked anyway, it does not work from their process, and is not used up.
    posted = subprocess.run(
        _as_user(other_user, POSTER),
        input=f"http://{daemon.address}/login {code}",
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        cwd="/",
        check=False,
    )
    assert posted.stdout.strip() == "403", posted.stderr
    mine = httpx.post(f"http://{daemon.address}/login", data={"code": code}, timeout=30)
    assert mine.status_code == 200 and daemon.data_dir.root.name  # the user's browser signs in
    assert "set-cookie" in mine.headers
