"""The wire types are the pinned release's: `protocol.py` is what `gen.py` writes from the vendored
schema today, so replacing the schema (another Codex release) without regenerating, or editing
the generated module by hand, fails here (docs/codex.md "The pinned release")."""

from __future__ import annotations

from openvaala_server.codex import gen


def test_the_committed_types_are_what_the_pinned_schema_generates() -> None:
    assert gen.TARGET.read_text() == gen.generate(), (
        "openvaala_server/codex/protocol.py is stale: run `python -m openvaala_server.codex.gen`"
    )
