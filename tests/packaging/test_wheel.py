"""`pipx install .` / `uv tool install .` give a self-contained `openvaala`: the wheel built from
a copy of the source tree, installed into a fresh virtual environment outside it, answers
`--version`, lists its editor plug-ins, runs `openvaala exec` on the demo model (starting its own
daemon) and serves the web UI's page and a JavaScript module of it.

The new environment gets the dependencies from this one's site-packages through a `.pth` line
(a path line adds that directory alone: its `.pth` files, this checkout's editable install among
them, are not read), so nothing is downloaded; `openvaala_server` itself must come from the
wheel, which the test checks."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from openvaala_server import __version__
from openvaala_server.discovery import LOCK_FILE, TOKEN_FILE, read_lock
from tests.support.daemon import DEFAULT_CONFIG

ROOT = Path(__file__).resolve().parents[2]
CONFIG = DEFAULT_CONFIG + "\n[server]\nport = 0\n"
# What a clone holds that a build must not need (and this checkout has beside it).
LEFT_OUT = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    ".hypothesis",
    "tests",
    "bench",
    "test-artifacts",
    "node_modules",
)


# The build and install run in the first test's setup: a mark on the fixture itself would do
# nothing (pytest refuses it), so the whole module gets the longer timeout.
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The `bin` directory of a fresh environment with the built wheel installed."""
    base = tmp_path_factory.mktemp("wheel")
    clone = base / "clone"
    shutil.copytree(ROOT, clone, ignore=LEFT_OUT, symlinks=True)
    dist = base / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "--disable-pip-version-check",
            str(clone),
            "-w",
            str(dist),
        ],
        check=True,
        cwd=base,
        capture_output=True,
        timeout=300,
    )
    wheel = next(dist.glob("openvaala-*.whl"))
    env_dir = base / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    assert ours in site.getsitepackages() or ours.startswith(sys.prefix)
    (Path(purelib) / "dependencies.pth").write_text(ours + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            "--disable-pip-version-check",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    yield env_dir / "bin"


def run(
    bin_dir: Path, *args: str, env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_dir / "openvaala"), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.timeout(300)  # the build and the install come first, on a loaded machine
def test_the_installed_wheel_is_self_contained(installed: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    home = tmp_path / "home"
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPENVAALA_", "PYTHON", "VIRTUAL"))
    }
    env.update(OPENVAALA_HOME=str(home), OPENVAALA_CONFIG=str(config))
    python = installed / "python"

    where = subprocess.run(
        [
            str(python),
            "-c",
            "import openvaala_server, openvaala_web; "
            "print(openvaala_server.__file__); print(openvaala_web.static_dir())",
        ],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for path in where:
        assert Path(path).is_relative_to(installed.parent), path  # the wheel's, not the clone's

    version = run(installed, "--version", env=env, cwd=work)
    assert version.stdout.strip() == f"openvaala {__version__}", version.stderr
    editors = run(installed, "editors", env=env, cwd=work)
    assert editors.returncode == 0, editors.stderr
    for line in editors.stdout.splitlines():
        plugin = Path(line.split()[1])
        assert plugin.is_relative_to(installed.parent) and any(plugin.iterdir()), line

    try:
        done = run(installed, "exec", "hello", env=env, cwd=work)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip(), done.stderr
        lock = read_lock(home / LOCK_FILE)
        assert lock is not None and lock.address and lock.pid
        command = Path(f"/proc/{lock.pid}/cmdline").read_bytes().split(b"\0")
        assert command[0].decode().startswith(str(installed.parent)), command  # its own daemon
        token = (home / TOKEN_FILE).read_text().strip()
        headers = {"Authorization": f"Bearer {token}"}
        page = httpx.get(f"http://{lock.address}/s/x/", headers=headers, timeout=30)
        assert page.status_code == 200 and 'src="static/js/app.js"' in page.text
        module = httpx.get(
            f"http://{lock.address}/s/x/static/js/app.js", headers=headers, timeout=30
        )
        assert module.status_code == 200 and "import " in module.text
    finally:
        run(installed, "serve", "stop", env=env, cwd=work)
