"""The results of calls the user's answer kept from running are told apart from failures
(domain/denials.py): Codex clients show them `declined`."""

from __future__ import annotations

from openvaala_server.domain import denials


def test_a_denied_call_s_result_is_declined_with_or_without_a_message() -> None:
    assert denials.declined(denials.denied_text(None), True)
    said = denials.denied_text("use the other file")
    assert said.endswith("Their message: use the other file")
    assert denials.declined(said, True)
    assert denials.declined(denials.INTERRUPTED_WAITING, True)


def test_a_failure_or_a_success_is_not_declined() -> None:
    assert not denials.declined("exit code: 1", True)
    # A command that printed the same words ran: its result is no refusal.
    assert not denials.declined(denials.DENIED, False)
    assert not denials.declined(f"output\n{denials.DENIED}", True)
