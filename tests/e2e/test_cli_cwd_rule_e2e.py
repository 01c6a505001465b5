"""`--cwd` read by the daemon's rule for a `cwd` (docs/protocol.md): an empty `--cwd` (an unset
variable in a script) and `~other/…` (another user's home, which the daemon refuses) are refused
by `exec`, the terminal UI and `import` in one line naming the option, exit 2, instead of working
in the current directory or in a home the daemon would not take. The real commands, as typed (no
shell expands the `~`), against a real daemon."""

from __future__ import annotations

from collections.abc import Iterator

import pexpect
import pytest

from tests.e2e.test_cli_home_cwd_e2e import openvaala
from tests.e2e.test_cli_tui_flags import spawn
from tests.support.daemon import DEFAULT_CONFIG, Daemon
from tests.support.running import running_daemon

EMPTY = "openvaala: --cwd is empty: name a directory (or leave --cwd out to work here)"
# The daemon's own words for such a `cwd` (domain/dir_paths.absolute: one rule for both).
OTHER_HOME = "only the daemon user's own home (~) is known, not another user's"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("cli-cwd-rule"), DEFAULT_CONFIG) as d:
        yield d


def refused(daemon: Daemon, *args: str) -> str:
    """What the command said on stderr; it must have exited 2 without a traceback."""
    if args[0] == "tui":  # the terminal UI needs a terminal, or it would not open at all
        child = spawn(daemon, *args)
        try:
            child.expect(pexpect.EOF)  # the composer came up instead: a timeout
            child.close()
        finally:
            child.close(force=True)
        said, code = str(child.before), child.exitstatus
    else:
        done = openvaala(daemon, daemon.workdir, *args)  # HOME: a directory of the test
        said, code = done.stderr, done.returncode
    assert code == 2, said
    assert "Traceback" not in said
    return said.strip()


COMMANDS = {
    "exec": ["exec", "hello", "--cwd"],
    "tui": ["tui", "--cwd"],
    "import": ["import", "bundle.tar", "--cwd"],
    "import-stdin": ["import", "-", "--cwd"],  # the path a bundle piped in takes
}


@pytest.mark.parametrize("command", COMMANDS)
def test_an_empty_cwd_is_refused(daemon: Daemon, command: str) -> None:
    assert refused(daemon, *COMMANDS[command], "") == EMPTY


@pytest.mark.parametrize("command", COMMANDS)
def test_another_users_home_is_refused_as_the_daemon_refuses_it(
    daemon: Daemon, command: str
) -> None:
    said = refused(daemon, *COMMANDS[command], "~root/proj")
    assert said == f"openvaala: --cwd ~root/proj: {OTHER_HOME}"
