"""The fixtures of tests/server/mcp/ (its conftest.py), for the
end-to-end tests moved here from it (tests/README.md)."""

from tests.server.mcp.conftest import *  # noqa: F403
