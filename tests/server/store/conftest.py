from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store


@pytest.fixture
def data_dir(tmp_path: Path) -> DataDir:
    data = DataDir(tmp_path / "home")
    data.ensure()
    return data


@pytest.fixture
async def store(data_dir: DataDir) -> AsyncIterator[Store]:
    opened = await Store.open(data_dir)
    yield opened
    await opened.close()
