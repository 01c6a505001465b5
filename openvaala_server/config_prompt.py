"""The settings of what the model is told before the conversation (docs/configuration.md,
"Base prompt" and "Project instructions"): an agent's `base_instructions`, and the top-level
`project_doc_names` and `project_doc_max_chars`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

AGENT_KEYS: Final = ("base_instructions",)
TOP_KEYS: Final = ("project_doc_names", "project_doc_max_chars")
DEFAULT_DOC_NAMES: Final = ("AGENTS.md",)
DEFAULT_DOC_MAX_CHARS: Final = 32_000
BASE_FILE_MAX_CHARS: Final = 200_000


@dataclass(frozen=True)
class BaseInstructions:
    """What comes first in an agent's system prompt. `text` None: the built-in prompt of the
    model's family (openvaala_server/prompts); "" (with `base_instructions = false`): nothing;
    else the file's text, read when the configuration is loaded."""

    text: str | None = None
    source: str = "built-in"  # the label the context cockpit shows: "built-in", "off", a path


@dataclass(frozen=True)
class ProjectDocs:
    """Which files hold project instructions, from the repository root down to the working
    directory (the first name found in each directory), and the cap on their total length."""

    names: tuple[str, ...] = DEFAULT_DOC_NAMES
    max_chars: int = DEFAULT_DOC_MAX_CHARS


class _Table(Protocol):
    table: dict[str, object]

    def integer(self, key: str, default: int, minimum: int = ...) -> int: ...

    def strings(self, key: str, default: list[str], kind_name: str) -> list[str]: ...

    def fail(self, key: str, problem: str) -> Exception: ...


def parse_base_instructions(t: _Table, config_path: Path | None) -> BaseInstructions:
    """`true` (the default): the built-in prompt; `false`: none; a string: a file whose text
    replaces it (relative to the configuration file's directory, `~` expanded)."""
    value = t.table.get("base_instructions", True)
    if value is True:
        return BaseInstructions()
    if value is False:
        return BaseInstructions(text="", source="off")
    if not isinstance(value, str) or not value.strip():
        raise t.fail("base_instructions", "must be true, false or the path of a text file")
    path = Path(value).expanduser()
    if not path.is_absolute() and config_path is not None:
        path = config_path.parent / path
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise t.fail("base_instructions", f"cannot read {path}: {exc}") from None
    if len(text) > BASE_FILE_MAX_CHARS:
        raise t.fail("base_instructions", f"{path} is over {BASE_FILE_MAX_CHARS} characters")
    return BaseInstructions(text=text.strip(), source=str(path))


def parse_project_docs(t: _Table) -> ProjectDocs:
    names = t.strings("project_doc_names", list(DEFAULT_DOC_NAMES), "a list of file names")
    for name in names:
        if "/" in name or "\\" in name or name in (".", ".."):
            raise t.fail("project_doc_names", f"{name!r} is not a plain file name")
    max_chars = t.integer("project_doc_max_chars", DEFAULT_DOC_MAX_CHARS, minimum=0)
    return ProjectDocs(names=tuple(dict.fromkeys(names)), max_chars=max_chars)
