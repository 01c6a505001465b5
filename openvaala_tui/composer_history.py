"""What the composer held before: sent messages and drafts cleared with Ctrl+C, recalled with
Up and Down as in Codex and Claude Code (docs/design.md, "Ctrl+C and quitting the TUI"). Pure:
the composer widget feeds it keys' results and shows what it returns."""

from __future__ import annotations

from dataclasses import dataclass, field

LIMIT = 200  # entries kept (this run of the app only)


@dataclass
class ComposerHistory:
    entries: list[str] = field(default_factory=list)
    # While the user walks the history: the entry shown, and the text that was in the composer
    # before the first Up (Down past the newest entry gives it back).
    _index: int | None = None
    _draft: str = ""

    @property
    def browsing(self) -> bool:
        return self._index is not None

    def record(self, text: str) -> None:
        """`text` left the composer (sent or cleared): the newest entry; the walk ends."""
        self._index = None
        self._draft = ""
        if not text.strip() or (self.entries and self.entries[-1] == text):
            return
        self.entries.append(text)
        del self.entries[:-LIMIT]

    def older(self, current: str) -> str | None:
        """The entry before the one shown (the newest on the first Up, which keeps `current`
        to come back to); None at the oldest."""
        if self._index is None:
            if not self.entries:
                return None
            self._draft = current
            self._index = len(self.entries)
        if self._index == 0:
            return None
        self._index -= 1
        return self.entries[self._index]

    def newer(self) -> str | None:
        """The entry after the one shown, or past the newest the text from before the walk;
        None when not walking."""
        if self._index is None:
            return None
        self._index += 1
        if self._index < len(self.entries):
            return self.entries[self._index]
        draft = self._draft
        self._index = None
        self._draft = ""
        return draft
