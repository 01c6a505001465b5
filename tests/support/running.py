"""A daemon for a module of tests, started with the environment its models need."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.daemon import Daemon, make_daemon, stop_any_server


@contextmanager
def running_daemon(
    tmp: Path, config: str, env: Mapping[str, str] | None = None
) -> Iterator[Daemon]:
    """A started daemon on `config` whose environment also holds `env` (API keys), stopped
    when the block ends, with any daemon a client restarted on its data directory."""
    d = make_daemon(tmp, config)
    try:
        with pytest.MonkeyPatch.context() as patch:
            for name, value in (env or {}).items():
                patch.setenv(name, value)
            d.start()
        yield d
    finally:
        d.stop()
        stop_any_server(d)
