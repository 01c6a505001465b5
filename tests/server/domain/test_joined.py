"""A fork's joined history paged without building the join (domain/joined.py): every page, from
every cursor, is the page of the join built whole (what `runtime/history.root_history` reads),
for forks made as `runtime/history.fork` makes them: pinned items copied before the summary, a
fork that compacts and grows, an original that grows on, a fork of such a fork (no summary of
its own), a cut that is missing or not found."""

from __future__ import annotations

import random
from typing import cast

from hypothesis import given
from hypothesis import strategies as st

from openvaala_server.domain import records as r
from openvaala_server.domain.joined import joined_page
from openvaala_server.domain.positions import PositionIndex


def _item(item_id: str, kind: str = "user_message") -> r.Item:
    return cast(r.Item, {"itemId": item_id, "type": kind})


def _whole(
    earlier: list[r.Item], cut: str | None, own: list[r.Item], source_id: str
) -> list[r.Item]:
    """The join built whole, as `root_history` builds it."""
    ids = [i["itemId"] for i in earlier]
    end = ids.index(cut) + 1 if cut in ids else len(earlier)
    part: list[r.Item] = [{**i, "fromConversationId": source_id} for i in earlier[:end]]
    seen = {i["itemId"] for i in part}
    return [*part, *(i for i in own if i["itemId"] not in seen)]


def _fork(rnd: random.Random) -> tuple[list[r.Item], str | None, list[r.Item]]:
    """An original with a compaction, and a fork of it made as `history.fork` makes one."""
    n = rnd.randint(2, 14)
    earlier = [_item(f"o{k}", rnd.choice(["user_message", "agent_message"])) for k in range(n)]
    at = rnd.randint(1, n)
    covers = rnd.randint(0, at - 1)
    summary = cast(r.Item, {"itemId": "s1", "type": r.SUMMARY, "coversUpTo": f"o{covers}"})
    earlier.insert(at, summary)
    pinned = {f"o{k}" for k in range(covers + 1) if rnd.random() < 0.3}
    kept = [i for i in earlier[: covers + 1] if i["itemId"] in pinned]
    rest = [i for i in earlier[covers + 1 :] if i is not summary]
    own = [cast(r.Item, dict(i)) for i in [*kept, summary, *rest]]
    if rnd.random() < 0.2:  # a fork of that fork, up to one of its copied items: no summary
        own = own[: rnd.randint(0, len(kept))]
    for k in range(rnd.randint(0, 6)):  # the fork goes on, and may compact
        own.append(_item(f"f{k}", r.SUMMARY if rnd.random() < 0.2 else "agent_message"))
    earlier += [_item(f"p{k}") for k in range(rnd.randint(0, 4))]  # so does the original
    cut = rnd.choice([f"o{covers}"] * 6 + [None, "gone"])
    return earlier, cut, own


@given(st.randoms(use_true_random=False))
def test_every_page_is_the_page_of_the_whole_join(rnd: random.Random) -> None:
    earlier, cut, own = _fork(rnd)
    whole = _whole(earlier, cut, own, "orig")
    theirs, mine = PositionIndex(), PositionIndex()
    for at, cursor in [*enumerate(i["itemId"] for i in whole), (len(whole), None)]:
        for limit in (1, 2, 3, 5, 100):
            page = joined_page(earlier, theirs, cut, own, mine, "orig", cursor, limit)
            assert page is not None
            assert page.items == whole[max(0, at - limit) : at], (cursor, limit)
            assert page.has_more == (at > limit)
    shown = {i["itemId"] for i in whole}
    for absent in ["nope", *(i["itemId"] for i in earlier if i["itemId"] not in shown)]:
        assert joined_page(earlier, theirs, cut, own, mine, "orig", absent, 3) is None


def test_pinned_copies_show_once_in_the_originals_part() -> None:
    summary = cast(r.Item, {"itemId": "s", "type": r.SUMMARY, "coversUpTo": "b"})
    earlier = [_item("a"), _item("b"), summary, _item("c")]
    own = [_item("a"), earlier[2], _item("c"), _item("mine")]  # "a" was pinned
    page = joined_page(earlier, PositionIndex(), "b", own, PositionIndex(), "orig", None, 10)
    assert page is not None
    assert [(i["itemId"], i.get("fromConversationId")) for i in page.items] == [
        ("a", "orig"),
        ("b", "orig"),
        ("s", None),
        ("c", None),
        ("mine", None),
    ]
