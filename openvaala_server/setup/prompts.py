"""How `openvaala setup` asks: at a terminal, or not at all (flags only, for scripts)."""

from __future__ import annotations

import getpass
from typing import Protocol


class Usage(Exception):
    """Something only a flag could have said is missing (exit status 2)."""


class Prompter(Protocol):
    interactive: bool  # whether a refused answer can be asked again (else the flag is named)

    def ask(self, question: str, default: str = "", *, flag: str) -> str:
        """A line of text; `default` for an empty answer."""
        ...

    def secret(self, question: str, *, flag: str) -> str:
        """A line of text that is not echoed (an API key)."""
        ...

    def choose(self, question: str, options: list[str], *, flag: str) -> int:
        """The index of one of `options`."""
        ...


class Terminal:
    interactive = True

    def ask(self, question: str, default: str = "", *, flag: str) -> str:
        shown = f" [{default}]" if default else ""
        return input(f"{question}{shown}: ").strip() or default

    def secret(self, question: str, *, flag: str) -> str:
        return getpass.getpass(f"{question}: ").strip()

    def choose(self, question: str, options: list[str], *, flag: str) -> int:
        print(question)
        for number, option in enumerate(options, 1):
            print(f"  {number}. {option}")
        while True:
            answer = input(f"Number (1-{len(options)}): ").strip()
            if answer.isdigit() and 1 <= int(answer) <= len(options):
                return int(answer) - 1
            print(f"Type a number from 1 to {len(options)}.")


class FlagsOnly:
    """Flags mode: every question is a usage error naming the flag that answers it."""

    interactive = False

    def ask(self, question: str, default: str = "", *, flag: str) -> str:
        if default:
            return default
        raise Usage(f"{flag} is needed ({question.lower()})")

    def secret(self, question: str, *, flag: str) -> str:
        # The question describes typing; a script gives the secret a flag's way instead.
        raise Usage(f"an API key is needed: give {flag}")

    def choose(self, question: str, options: list[str], *, flag: str) -> int:
        raise Usage(f"{flag} is needed: one of {', '.join(options)}")
