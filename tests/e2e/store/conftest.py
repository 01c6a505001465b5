"""The fixtures of tests/server/store/ (its conftest.py), for the
end-to-end tests moved here from it (tests/README.md)."""

from tests.server.store.conftest import *  # noqa: F403
