"""The `data` of a JSON-RPC error a client raised (LSP and ACP clients both carry it)."""

from __future__ import annotations

from typing import Any


def error_data(exc: BaseException) -> dict[str, Any]:
    data = getattr(exc, "data", None)
    assert isinstance(data, dict), f"error without data: {exc!r}"
    return data
