"""Typed reading of request params: every wrong type or missing key is an `InvalidParams`
naming the key, and every id is checked against the id pattern before anything else sees it."""

from __future__ import annotations

from typing import Any

from openvaala_server.domain.ids import is_valid_id
from openvaala_server.errors import InvalidParams, NotFound

_MISSING: Any = object()


class Params:
    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw

    def _get(self, key: str, default: Any) -> Any:
        if key not in self.raw or self.raw[key] is None:
            if default is _MISSING:
                raise InvalidParams(f'"{key}" is required', param=key)
            return default
        return self.raw[key]

    def string(self, key: str, default: Any = _MISSING, *, max_len: int = 1_000_000) -> Any:
        value = self._get(key, default)
        if value is default:
            return value
        if not isinstance(value, str):
            raise InvalidParams(f'"{key}" must be a string', param=key)
        if len(value) > max_len:
            raise InvalidParams(f'"{key}" is longer than {max_len} characters', param=key)
        return value

    def boolean(self, key: str, default: Any = _MISSING) -> Any:
        value = self._get(key, default)
        if value is not default and not isinstance(value, bool):
            raise InvalidParams(f'"{key}" must be true or false', param=key)
        return value

    def integer(
        self, key: str, default: Any = _MISSING, *, minimum: int = 0, maximum: int = 2**53
    ) -> Any:
        value = self._get(key, default)
        if value is default:
            return value
        if not isinstance(value, int) or isinstance(value, bool):
            raise InvalidParams(f'"{key}" must be a whole number', param=key)
        if not minimum <= value <= maximum:
            raise InvalidParams(f'"{key}" must be between {minimum} and {maximum}', param=key)
        return value

    def choice(self, key: str, options: tuple[str, ...], default: Any = _MISSING) -> Any:
        value = self.string(key, default)
        if value is not default and value not in options:
            raise InvalidParams(f'"{key}" must be one of {", ".join(options)}', param=key)
        return value

    def id(self, key: str, default: Any = _MISSING) -> Any:
        """An id param. A malformed id cannot name anything, so it is `not_found`, not a path."""
        value = self._get(key, default)
        if value is default:
            return value
        if not isinstance(value, str):
            raise InvalidParams(f'"{key}" must be a string', param=key)
        if not is_valid_id(value):
            raise NotFound(f"no such {key.removesuffix('Id')}: {value[:80]!r}", param=key)
        return value
