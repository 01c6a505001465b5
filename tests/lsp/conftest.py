"""Fixtures: `lsp` is a pytest-lsp client driving `openvaala lsp` against a fresh daemon, once
with Neovim's and once with VS Code's recorded client capabilities (`editor`). pytest-lsp checks
the bridge's messages against the client's capabilities; its LspSpecificationWarning stays an
error under the project's `filterwarnings = error`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from pytest_lsp import LanguageClient

from tests.lsp.harness import EDITORS, Recorder, capabilities, start_lsp, stop_lsp
from tests.support.daemon import Daemon


@pytest.fixture(params=EDITORS)
def editor(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest_asyncio.fixture
async def lsp(editor: str, daemon: Daemon) -> AsyncIterator[tuple[LanguageClient, Recorder]]:
    client, rec, _ = await start_lsp(daemon, capabilities(editor))
    yield client, rec
    await stop_lsp(client)
