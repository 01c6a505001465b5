"""Generate `protocol.py`, the wire types of the pinned Codex release, from its schema.

Run `python -m openvaala_server.codex.gen` after replacing `schema/` with another release's
`codex app-server generate-json-schema --experimental` output (docs/codex.md, "The pinned
release"); `tests/codex/test_generated_types.py` fails while the committed module differs from
what this prints.

The schema holds every type of the protocol (about 950); the module holds those reachable from
`ROOTS`, the shapes the bridge builds, so mypy checks each dict the bridge sends against the
release's own declaration. datamodel-code-generator writes them as TypedDicts; its version is
pinned in pyproject.toml because its output is what the test compares.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from openvaala_server.codex.schema import CODEX_VERSION, SCHEMA_PATH
from openvaala_server.protocol import codec

TARGET: Final = Path(__file__).parent / "protocol.py"

# What the bridge builds (wire.py re-exports them under the names the bridge uses).
ROOTS: Final = (
    "Thread",
    "Turn",
    "ThreadItem",
    "ThreadStatus",
    "TurnError",
    "TurnStatus",
    "UserInput",
    "FileUpdateChange",
    "CommandExecutionRequestApprovalParams",
    "FileChangeRequestApprovalParams",
    "ReasoningEffort",
    "AskForApproval",
    "SandboxPolicy",
    "CollaborationMode",
    "TurnStartParams",
    "ThreadSourceKind",
)

_V2_REF: Final = "#/definitions/v2/"
_REF: Final = "#/definitions/"
_HEADER: Final = f'''"""Codex {CODEX_VERSION}'s app-server wire types, generated from its schema.

Do not edit: `python -m openvaala_server.codex.gen` writes this file (see that module)."""

'''


def _flat_definitions(schema: dict[str, dict[str, object]]) -> dict[str, object]:
    """The schema's definitions in one namespace: v2's over the legacy ones of the same name
    (the bridge speaks v2)."""
    definitions = dict(schema["definitions"])
    v2 = definitions.pop("v2")
    assert isinstance(v2, dict)
    return {**definitions, **v2}


def _refs(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref.removeprefix(_V2_REF).removeprefix(_REF)
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def subset_schema() -> dict[str, object]:
    """The definitions reachable from ROOTS, with every `$ref` pointing into that one set."""
    definitions = _flat_definitions(codec.parse_text(SCHEMA_PATH.read_text()))
    reached: dict[str, object] = {}
    pending = list(ROOTS)
    while pending:
        name = pending.pop()
        if name in reached:
            continue
        reached[name] = definitions[name]
        pending.extend(_refs(definitions[name]))
    text = codec.text(dict(sorted(reached.items())), sort_keys=True, ascii=True)
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        # The module's one root type: every shape the bridge builds.
        "title": "CodexWire",
        "anyOf": [{"$ref": f"{_REF}{name}"} for name in ROOTS],
        "definitions": _without_private_keys(
            codec.parse_text(text.replace(f'"{_V2_REF}', f'"{_REF}'))
        ),
    }


def _without_private_keys(node: object) -> object:
    """The schema without properties named `_…` (MCP's `_meta`): datamodel-code-generator
    writes such a key as `field_meta`, a TypedDict key no message has; the bridge sends none."""
    if isinstance(node, list):
        return [_without_private_keys(value) for value in node]
    if not isinstance(node, dict):
        return node
    result = {key: _without_private_keys(value) for key, value in node.items()}
    properties = result.get("properties")
    if isinstance(properties, dict):
        result["properties"] = {k: v for k, v in properties.items() if not k.startswith("_")}
    return result


def generate() -> str:
    """The module's text, formatted as the repository's ruff formats it."""
    from datamodel_code_generator import InputFileType, LiteralType, PythonVersion, generate
    from datamodel_code_generator.enums import DataModelType
    from datamodel_code_generator.format import Formatter

    with warnings.catch_warnings():
        # It warns about formats it maps to plain types (`uint32` → int): the types are right.
        warnings.simplefilter("ignore")
        code = generate(
            codec.text(subset_schema(), ascii=True),
            input_file_type=InputFileType.JsonSchema,
            output_model_type=DataModelType.TypingTypedDict,
            target_python_version=PythonVersion.PY_311,
            use_title_as_name=True,
            use_union_operator=True,
            use_standard_collections=True,
            enum_field_as_literal=LiteralType.All,
            disable_timestamp=True,
            use_schema_description=True,
            use_closed_typed_dict=False,
            untyped_value_type="openvaala_server.protocol.json_types.JsonValue",
            formatters=[Formatter.BUILTIN],
            custom_file_header=_HEADER,
        )
    assert isinstance(code, str)
    return _ruff_format(code)


def _ruff_format(code: str) -> str:
    ruff = Path(sys.executable).parent / "ruff"
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [str(ruff), "format", "--stdin-filename", str(TARGET), "-"],
        input=code,
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    )
    return result.stdout


def main() -> None:
    TARGET.write_text(generate())
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
