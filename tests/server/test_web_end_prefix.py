"""`openvaala web --end` takes a prefix of a browser session's id, as commands take one of a
conversation's; one two sessions share is refused, naming both (here with no daemon running:
the command edits the session file itself)."""

from __future__ import annotations

from pathlib import Path

import pytest

from openvaala_server import web_cli
from openvaala_server.api.web_login import WebLogins


def test_end_takes_a_unique_prefix_and_refuses_a_shared_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENVAALA_HOME", str(tmp_path))
    logins = WebLogins.open(tmp_path)
    for agent in ("First", "Second"):
        assert logins.redeem(logins.new_code(), agent) is not None
    logins.sessions[0]["id"], logins.sessions[1]["id"] = "abcd1111aaaa", "abcd2222bbbb"
    logins._save()

    assert web_cli.end_session("abcd") == 2
    said = capsys.readouterr().err
    assert "abcd is ambiguous" in said and "abcd1111aaaa" in said and "abcd2222bbbb" in said
    assert web_cli.end_session("abc") == 1  # too short to be a prefix: no such session
    assert web_cli.end_session("ABCD2") == 0
    assert "Ended browser session abcd2222bbbb." in capsys.readouterr().out
    assert [s["id"] for s in WebLogins.open(tmp_path).list_sessions()] == ["abcd1111aaaa"]
