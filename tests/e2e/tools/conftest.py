"""The fixtures of tests/server/tools/ (its conftest.py), for the
end-to-end tests moved here from it (tests/README.md)."""

from tests.server.tools.conftest import *  # noqa: F403
