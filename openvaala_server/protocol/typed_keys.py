"""Which keys of a TypedDict may be left out, read from its hints.

`__required_keys__` and `__optional_keys__` are wrong on Python 3.11 for a key marked
`NotRequired[...]` or `Required[...]` under `from __future__ import annotations`: the qualifier
is still a string when the class is made, so such a key counts as the class's `total` says (a
TypedDict whose keys are all `NotRequired` has them all required). The qualifiers are read from
the resolved hints here; an unqualified key keeps what its class's `total` says, which
`__optional_keys__` gets right (inherited keys included).
"""

from __future__ import annotations

import typing
from typing import NotRequired, Required


def optional_keys(shape: type) -> frozenset[str]:
    """The keys of the TypedDict `shape` that may be left out."""
    hints = typing.get_type_hints(shape, include_extras=True)
    unqualified_optional: frozenset[str] = getattr(shape, "__optional_keys__", frozenset())
    return frozenset(
        key
        for key, hint in hints.items()
        if typing.get_origin(hint) is NotRequired
        or (typing.get_origin(hint) is not Required and key in unqualified_optional)
    )


def required_keys(shape: type) -> frozenset[str]:
    """The keys of the TypedDict `shape` that must be there."""
    keys = typing.get_type_hints(shape, include_extras=True)
    return frozenset(keys) - optional_keys(shape)
