"""Custom slash commands: prompt files the user writes (docs/configuration.md, "Custom
commands"). `/name args` sends the file's text, `$ARGUMENTS` replaced by `args`; the user's
files are in the configuration directory's `commands/`, the project's in the conversation
directory's `.openvaala/commands/`, which wins over the user's for the same name.

One implementation for every client: the terminal reads the files itself (it completes their
names as you type), the daemon lists and expands them for the others (`commands/list`,
`commands/expand`: the web UI, `openvaala exec /name args`; docs/protocol.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

PROJECT_DIR = Path(".openvaala") / "commands"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")  # what `commands.parse` can give back
_MAX_BYTES = 100_000  # a prompt, not a document: larger files are skipped


@dataclass(frozen=True)
class CustomCommand:
    name: str
    description: str
    template: str
    path: Path

    @property
    def from_project(self) -> bool:
        """A file of the project's `.openvaala/commands/`: the repository's text, not the user's."""
        return is_project_dir(self.path.parent)

    def expand(self, arguments: str) -> str:
        """The message: `$ARGUMENTS` replaced; with none in the file, the arguments follow it."""
        if "$ARGUMENTS" in self.template:
            return self.template.replace("$ARGUMENTS", arguments).strip()
        return f"{self.template.strip()}\n\n{arguments}".strip()


def parse_file(name: str, text: str, path: Path) -> CustomCommand:
    """A prompt file: an optional `---` front matter whose `description:` is shown in /help and
    completion (else the first line of the prompt is), then the prompt."""
    description = ""
    body = text
    if text.startswith("---\n"):
        head, sep, rest = text[4:].partition("\n---")
        if sep:
            body = rest.partition("\n")[2]
            for line in head.splitlines():
                key, _, value = line.partition(":")
                if key.strip() == "description":
                    description = value.strip().strip("\"'")
    if not description:
        first = next((line.strip() for line in body.splitlines() if line.strip()), "")
        description = first.lstrip("# ")[:80]
    return CustomCommand(name, description, body, path)


def directories(user_dir: Path, cwd: str) -> list[Path]:
    """Where to look, the later winning over the earlier."""
    return [user_dir, Path(cwd) / PROJECT_DIR]


def load(
    dirs: list[Path], builtin: set[str] | frozenset[str] = frozenset()
) -> dict[str, CustomCommand]:
    """The custom commands in `dirs` by name; a built-in command's name is never overridden."""
    found: dict[str, CustomCommand] = {}
    for directory in dirs:
        try:
            paths = sorted(directory.glob("*.md"))
        except OSError:
            continue
        for path in paths:
            name = path.stem.lower()
            if not _NAME.match(name) or name in builtin:
                continue
            if is_project_dir(directory) and not _inside(path, directory.parent.parent):
                # A project's file is the repository's: a link out of it (to ~/.ssh/id_rsa, the
                # daemon's token) would send that file to the model as the message.
                continue
            try:
                if path.stat().st_size > _MAX_BYTES:
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            found[name] = parse_file(name, text, path)
    return found


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def is_project_dir(directory: Path) -> bool:
    return directory.parts[-2:] == PROJECT_DIR.parts
