"""Names for JSON whose shape is free (tool arguments, provider state, a config table).

Declared shapes are TypedDicts (protocol/payloads.py, domain/records.py); these aliases are for
what truly has no shape of its own. `JsonObject` is what a decoder returns for an object;
`JsonMapping` accepts any object-like value, TypedDicts included (a TypedDict is a
`Mapping[str, object]`, never a `dict[str, JsonValue]`), so an encoder takes that.
"""

from __future__ import annotations

from collections.abc import Mapping

# A module whose TypedDicts use these imports `JsonValue` by name as well: typing.get_type_hints
# resolves the alias's inner "JsonValue" in the TypedDict's own module.
JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]
JsonObject = dict[str, JsonValue]
JsonMapping = Mapping[str, object]
