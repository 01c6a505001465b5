"""The pinned Codex release and the schema its app-server generated (docs/codex.md).

`schema/codex_app_server_protocol.schemas.json` is the output of
`codex app-server generate-json-schema --experimental` of that release, unchanged: data, read only
by the tests that check every message the bridge sends."""

from __future__ import annotations

from pathlib import Path
from typing import Final

CODEX_VERSION: Final = "0.171.0"
SCHEMA_PATH: Final = Path(__file__).parent / "schema" / "codex_app_server_protocol.schemas.json"
