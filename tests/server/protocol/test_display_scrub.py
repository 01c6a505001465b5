"""`scrub`: a method name in a daemon's message becomes plain words; a path stays as it is."""

from __future__ import annotations

import pytest

from openvaala_server.protocol.display import scrub


@pytest.mark.parametrize(
    "text",
    [
        "no custom command /x (a Markdown file in /home/u/.config/openvaala/commands)",
        "cannot read src/session/store.py",
        "see ~/config/openvaala.toml and ./mcp/servers.json",
        "the folder item/list-of-things",
    ],
)
def test_a_path_is_left_as_it_is(text: str) -> None:
    assert scrub(text) == text


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("send conversation/setCwd first", "send a request to the daemon first"),
        ("call `turn/interrupt`.", "call `a request to the daemon`."),
        ("(session/updated)", "(a request to the daemon)"),
    ],
)
def test_a_method_name_becomes_plain_words(text: str, said: str) -> None:
    assert scrub(text) == said
