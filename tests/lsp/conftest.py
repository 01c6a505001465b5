from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from pytest_lsp import LanguageClient

from tests.lsp.harness import EDITORS, Recorder, capabilities, start_lsp
from tests.support.daemon import Daemon

# pytest-lsp checks the server against the spec and warns (LspSpecificationWarning); those
# warnings stay errors. Its client may leave a subprocess transport to the garbage collector.
pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture(params=EDITORS)
def editor(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest_asyncio.fixture
async def lsp(editor: str, daemon: Daemon) -> AsyncIterator[tuple[LanguageClient, Recorder]]:
    client, rec, _ = await start_lsp(daemon, capabilities(editor))
    yield client, rec
    await client.shutdown_session()
    await client.stop()


@pytest.fixture
def any_daemon(daemon_factory: Any) -> Any:
    return daemon_factory
