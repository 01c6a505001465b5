"""A small world for sandbox tests: a workspace, a directory outside it, the daemon's private paths.

It lives under /var/tmp rather than pytest's /tmp: a sandboxed command gets a private /tmp of its
own, so a path under the real /tmp would simply be missing in there, and "the write failed" would
prove nothing about the read-only filesystem.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from openvaala_server.domain.permissions import Confinement, SandboxMode

TOKEN = "token-that-grants-the-whole-api"
SECRET_KEY = "sk-should-never-reach-a-tool"


@dataclass(frozen=True)
class Places:
    root: Path
    work: Path  # the conversation's working directory
    outside: Path  # a directory the sandboxed modes must not write
    data: Path  # the daemon's data directory (protected)
    config: Path  # the daemon's config file (protected)

    @property
    def token(self) -> Path:
        return self.data / "token"

    def confinement(self, mode: SandboxMode, network: bool = False) -> Confinement:
        return Confinement(
            mode=mode,
            network=network,
            protected=(self.data, self.config),
            hidden_env=frozenset({"SOME_API_KEY"}),
        )


def make_places() -> Places:
    root = Path(tempfile.mkdtemp(prefix="openvaala-sandbox-", dir=_outside_tmp()))
    places = Places(
        root=root,
        work=root / "work",
        outside=root / "outside",
        data=root / "data",
        config=root / "config" / "config.toml",
    )
    for folder in (places.work, places.outside, places.data, places.config.parent):
        folder.mkdir()
    places.token.write_text(TOKEN)
    places.config.write_text('[agents.default]\nmodel = "demo"\n')
    (places.outside / "file.txt").write_text("original\n")
    # A link in the workspace that leads out of it.
    (places.work / "link.txt").symlink_to(places.outside / "file.txt")
    (places.work / "token-link").symlink_to(places.token)
    return places


def _outside_tmp() -> str:
    for candidate in ("/var/tmp", os.path.expanduser("~")):
        if os.access(candidate, os.W_OK):
            return candidate
    pytest.skip("no writable directory outside /tmp")
