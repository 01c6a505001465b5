"""Short ids: a unique prefix names one conversation; the errors say what is wrong."""

from __future__ import annotations

import pytest

from openvaala_server.domain.short_ids import IdPrefixError, match, short_ids

IDS = ["80cd7c40" + "a" * 24, "80cd7c41" + "b" * 24, "12345678" + "c" * 24]


def test_a_unique_prefix_names_its_conversation() -> None:
    assert match("80CD7C40", IDS) == IDS[0]
    assert match("123456", IDS) == IDS[2]
    assert match(IDS[1], IDS) == IDS[1]


def test_an_ambiguous_prefix_names_the_candidates() -> None:
    with pytest.raises(IdPrefixError, match="ambiguous: 80cd7c40aa, 80cd7c41bb") as caught:
        match("80cd7c", IDS)
    assert "type more characters" in str(caught.value)


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("ffffff", "no conversation id starts with ffffff"),
        ("80cd", "too short: give at least 6 characters"),
        ("80cd7z", "is not a conversation id"),
        ("", "is not a conversation id"),
    ],
)
def test_an_unknown_or_malformed_prefix_says_why(typed: str, says: str) -> None:
    with pytest.raises(IdPrefixError, match=says):
        match(typed, IDS)


def test_a_list_lengthens_only_the_short_ids_two_conversations_share() -> None:
    twin = "80cd7c40a" + "f" * 23
    shown = short_ids([*IDS, twin])
    assert shown == {
        IDS[0]: "80cd7c40aa",
        twin: "80cd7c40af",
        IDS[1]: "80cd7c41",
        IDS[2]: "12345678",
    }
    assert all(match(short, [*IDS, twin]) == cid for cid, short in shown.items())
