"""Every `openvaala` subcommand says what it does: a line in `openvaala --help`, and its own
`--help` opening with it. Walks the real parser, so a subcommand added later is checked too."""

from __future__ import annotations

import argparse

import pytest

from openvaala_server import cli


def subcommands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], str | None]]:
    """(the words that reach it, its line in the parent's help) for every subcommand."""
    found: list[tuple[tuple[str, ...], str | None]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                words = (*path, choice.dest)
                found.append((words, choice.help))
                found += subcommands(action.choices[choice.dest], words)
    return found


def help_of(words: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        cli.main([*words, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def test_every_subcommand_says_what_it_does(capsys: pytest.CaptureFixture[str]) -> None:
    found = subcommands(cli._parser())
    names = [words[0] for words, _ in found]
    for expected in ("serve", "exec", "reindex", "web", "lsp", "tui"):
        assert expected in names
    top = help_of((), capsys)
    for words, line in found:
        assert line and len(line.split()) >= 3, f"`openvaala {' '.join(words)}` has no help line"
        if len(words) == 1:
            assert words[0] in top
        own = help_of(words, capsys)
        # After the usage lines, a paragraph says what the command does (argparse would go
        # straight to the list of arguments).
        description = own.split("\n\n")[1]
        assert not description.startswith(("positional arguments:", "options:")), own
        assert len(description.split()) >= 3, own


def test_serve_help_names_every_action(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(("serve",), capsys)
    for action in ("start", "stop", "restart", "status"):
        assert action in text
