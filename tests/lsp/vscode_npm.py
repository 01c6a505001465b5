"""editors/vscode's npm packages (its dependencies, esbuild, and @vscode/vsce), installed once
and kept in pytest's cache directory, keyed by what package.json asks for: the packaging test and
the real-editor tests link them in instead of each running an npm install against the registry.
A change of package.json (or of the vsce version) installs them again; `pytest --cache-clear`
drops them."""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "editors" / "vscode"
VSCE = "@vscode/vsce@4.1.0"
NPM = shutil.which("npm")


def _key(manifest: dict[str, object]) -> str:
    wanted = {
        "dependencies": manifest.get("dependencies"),
        "devDependencies": manifest.get("devDependencies"),
        "vsce": VSCE,
    }
    return hashlib.sha256(json.dumps(wanted, sort_keys=True).encode()).hexdigest()[:16]


def node_modules(cache: Path) -> Path:
    """The node_modules folder for editors/vscode under `cache`, installed the first time (one
    installer at a time: a lock; a half-done install is never seen: renamed into place)."""
    assert NPM is not None
    manifest = json.loads((EXT / "package.json").read_text())
    done = cache / _key(manifest)
    with open(cache / "install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (done / "node_modules" / ".bin" / "vsce").exists():
            work = Path(tempfile.mkdtemp(dir=cache, prefix="installing-"))
            (work / "package.json").write_text(json.dumps(manifest))
            quiet = ["--no-audit", "--no-fund", "--prefer-offline"]
            try:
                subprocess.run(
                    [NPM, "install", *quiet, VSCE],
                    cwd=work,
                    check=True,
                    capture_output=True,
                    timeout=240,
                )
            except BaseException:
                shutil.rmtree(work, ignore_errors=True)  # no half install left in the cache
                raise
            shutil.rmtree(done, ignore_errors=True)
            work.rename(done)
    return done / "node_modules"


@pytest.fixture(scope="session")
def vscode_node_modules(request: pytest.FixtureRequest) -> Path:
    return node_modules(request.config.cache.mkdir("openvaala-vscode-npm"))


def link_node_modules(ext: Path, modules: Path) -> None:
    """Give a copy of editors/vscode its packages (a link to the installed ones)."""
    (ext / "node_modules").symlink_to(modules, target_is_directory=True)
