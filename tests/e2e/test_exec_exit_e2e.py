"""`openvaala exec` ends as soon as its answer is written, without the interpreter's teardown
(docs/design.md, "Exec's spawn and the daemon's first turn"): what it wrote still reaches a pipe
whole, and its exit status is the one its answer says.

Whether the teardown ran is seen from outside: a `sitecustomize` on exec's path registers an
`atexit` handler that writes a file; an interpreter that tears itself down runs it, an exec that
ends at once does not. The demo model drives the turns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.daemon import DEFAULT_CONFIG, Daemon
from tests.support.running import running_daemon

EXIT_OK, EXIT_USAGE = 0, 2

# Written by the interpreter's teardown, if it runs.
HOOK = """
import atexit, os
_mark = os.environ.get("OPENVAALA_TEST_TEARDOWN_MARK")
if _mark:
    atexit.register(lambda: open(_mark, "w").close())
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("exec-exit"), DEFAULT_CONFIG) as d:
        yield d


def run_exec(
    d: Daemon, tmp_path: Path, *args: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(HOOK)
    mark = tmp_path / "torn-down"
    root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (str(hooks), d.env.get("PYTHONPATH"), root) if p)
    done = subprocess.run(
        [sys.executable, "-m", "openvaala_server", "exec", *args],
        env={**d.env, "PYTHONPATH": path, "OPENVAALA_TEST_TEARDOWN_MARK": str(mark)},
        cwd=d.workdir,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done, mark


def test_a_long_answer_reaches_the_pipe_whole_and_exec_ends_at_once(
    home: Daemon, tmp_path: Path
) -> None:
    # ~235 KB of JSON lines: far more than stdout's buffer, so an unflushed end would cut it.
    done, mark = run_exec(home, tmp_path, "--json", "run: seq 1 30000")
    assert done.returncode == EXIT_OK, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["method"] == "exec/ended"
    assert events[-1]["params"]["exitCode"] == EXIT_OK
    assert "\\n30000" in done.stdout  # the command's last line, in the tool's output (JSON)
    assert "openvaala exec --resume " in done.stderr
    assert not mark.exists()  # no teardown after the answer


def test_a_refused_run_keeps_its_status_and_its_message(home: Daemon, tmp_path: Path) -> None:
    done, mark = run_exec(home, tmp_path, "--model", "nope", "hi")
    assert done.returncode == EXIT_USAGE
    assert "model 'nope' is not configured: pass --model NAME (demo)\n" in done.stderr
    assert not mark.exists()
