"""A request's history in a provider's wire format, assembled in proportion to what changed
(docs/design.md, "Performance at scale", issue 17 point 4).

Every model call sends the whole context again, and a long conversation's context is tens of
thousands of items of which only the last few are new. Converting each item is cached per item
(`http.WireCache`), but pairing calls with results, merging messages and choosing reasoning still
walked the whole context at every call: milliseconds per 10k items, on the event loop.

So each provider keeps, per session (the request's `owner`), the assembled messages of the
context up to its last user message: a *prefix*. Its items are checked at every call — the same
item objects, in the same order, and the same image data for the items with images — and the
call then assembles only what follows it. Anything other than an append (a compaction summary,
a pin that changes the context, a history read back from disk, a fork) fails that check, and the
prefix is built again (from the wire cache, whose entries are still there).

Why a user message is where a prefix may end: all three formats' assembly is a fold over the
context whose state there is known without looking back. `http.pair_tool_calls` closes every
group of calls at a user message (its results, or synthetic ones, then the waiting notes), so
pairing the parts on either side of one gives what pairing the whole gives. The Responses API's
reasoning choice depends only on where the last user message is: everything before a user
message that is not the last is "earlier turns", and an appended message never changes that.
Merging (consecutive roles in one message) depends on the last message of the prefix, which the
fold reads when it goes on (`Fold`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from openvaala_server.domain.records import USER_MESSAGE, Item
from openvaala_server.models import image_parts
from openvaala_server.models.http import FINAL_STATUSES, WireCache, pair_tool_calls

W = TypeVar("W")  # the wire form of one item (http.WireCache)
M = TypeVar("M")  # one message (or input item) of the request

# fold(out, paired, wires, later_turn): append the messages of the paired items `paired` (their
# wire forms `wires`) to `out`, which already holds the messages before them. The last of those
# may be merged with: it is then replaced by a copy, never modified (it may be shared). True
# `later_turn`: a user message follows these items (they are not the current turn).
Fold = Callable[[list[M], list[Item], list[W], bool], None]


@dataclass
class Prefix(Generic[M]):
    """The assembled messages of a context's first items, which a user message follows."""

    items: list[Item]  # those items (held: their identity is what is checked)
    messages: list[M]  # only this prefix holds it: a call copies it before adding to it
    images: dict[str, str | None]  # the image data its items were assembled with, by SHA-256


V = TypeVar("V")


class ByOwner(Generic[V]):
    """Values by owner object, compared by identity and held weakly: an owner that goes away
    takes its value with it (sessions are not hashable: they compare by value)."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref[object], V]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, owner: object) -> V | None:
        entry = self._entries.get(id(owner))
        return entry[1] if entry is not None and entry[0]() is owner else None

    def set(self, owner: object, value: V) -> None:
        key = id(owner)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is owner:
            self._entries[key] = (entry[0], value)
            return
        entries = self._entries

        def gone(ref: weakref.ref[object]) -> None:
            # Only this owner's entry: its id may already name another one's.
            if (held := entries.get(key)) is not None and held[0] is ref:
                del entries[key]

        try:
            ref = weakref.ref(owner, gone)
        except TypeError:  # an owner that cannot be held weakly is not kept for
            return
        entries[key] = (ref, value)

    def pop(self, owner: object) -> None:
        if self.get(owner) is not None:
            del self._entries[id(owner)]

    def values(self) -> list[V]:
        return [value for _, value in self._entries.values()]

    def drop_if(self, stale: Callable[[V], bool]) -> None:
        for key, (_, value) in list(self._entries.items()):
            if stale(value):
                del self._entries[key]

    def clear(self) -> None:
        self._entries.clear()


class Assembler(Generic[W, M]):
    """One provider's assembly of request histories: its wire cache and its sessions' prefixes."""

    def __init__(
        self,
        convert: Callable[[Item], W],
        convert_images: Callable[[Item, Mapping[str, str]], W],
        fold: Fold[M, W],
    ) -> None:
        self.cache: WireCache[W] = WireCache(convert)
        self.convert_images = convert_images
        self.fold = fold
        self._prefixes: ByOwner[Prefix[M]] = ByOwner()
        self.folded = 0  # items paired and folded, prefixes included (for tests and benchmarks)

    def __len__(self) -> int:
        """How many prefixes are kept."""
        return len(self._prefixes)

    def messages(
        self,
        items: list[Item],
        images: Mapping[str, str],
        owner: object | None = None,
        before: Sequence[M] = (),
    ) -> list[M]:
        """The request's messages for context `items`, after `before` (a system message); with
        an `owner`, the owner's prefix is reused when it still holds, and moved up to the last
        user message."""
        out: list[M] = list(before)
        if owner is None:
            self._fold(out, items, images, later_turn=False)
            return out
        head, start = self._advance(owner, items, images, len(items))
        out.extend(head)
        self._fold(out, items[start:] if start else items, images, later_turn=False)
        return out

    def prepare(
        self, owner: object, items: list[Item], images: Mapping[str, str] | None, upto: int
    ) -> int:
        """Move the owner's prefix up to the last user message in `items[:upto]` (a warm-up
        does it a step at a time); returns where the prefix ends. `images` None: their data is
        not known yet (a warm-up, runtime/warmup.py), so the prefix stops before the first item
        with images, and a prefix is not checked against the data."""
        return self._advance(owner, items, images, upto)[1]

    def forget(self, items: list[Item]) -> None:
        """A history let go of memory (runtime/residency.py): drop what holds its items."""
        self.cache.forget(items)
        gone = set(map(id, items))
        self._prefixes.drop_if(lambda prefix: id(prefix.items[-1]) in gone)

    def drop(self, owner: object) -> None:
        """Let go of the owner's prefix (its history was let go of memory)."""
        self._prefixes.pop(owner)

    def clear(self) -> None:
        self.cache.clear()
        self._prefixes.clear()

    # -- internals ---------------------------------------------------------------------------

    def _fold(
        self, out: list[M], items: list[Item], images: Mapping[str, str], *, later_turn: bool
    ) -> None:
        paired = pair_tool_calls(items)
        convert = self.cache.convert
        wires = image_parts.wires(paired, self.cache, convert, self.convert_images, images)
        self.folded += len(paired)
        self.fold(out, paired, wires, later_turn)

    def _valid(
        self, owner: object, items: list[Item], images: Mapping[str, str] | None
    ) -> Prefix[M]:
        """The owner's prefix if `items` begin with its items and a user message follows them;
        an empty one otherwise (and a stale one is dropped)."""
        prefix = self._prefixes.get(owner)
        if prefix is None:
            return Prefix([], [], {})
        kept = prefix.items
        n = len(kept)
        if (
            len(items) > n
            and items[0] is kept[0]
            and items[n - 1] is kept[-1]
            and items[n].get("type") == USER_MESSAGE
            # Item by item, at C speed: identical objects compare equal without a look inside.
            and items[:n] == kept
            and (images is None or all(images.get(s) == d for s, d in prefix.images.items()))
        ):
            return prefix
        self._prefixes.pop(owner)
        return Prefix([], [], {})

    def _advance(
        self, owner: object, items: list[Item], images: Mapping[str, str] | None, upto: int
    ) -> tuple[list[M], int]:
        prefix: Prefix[M] = self._valid(owner, items, images)
        start = len(prefix.items)
        # Room for this context beside the other owners' before converting it: a generation
        # smaller than the context would drop its first entries while converting the rest.
        self.cache.fit(sum(len(p.items) for p in self._prefixes.values()) - start + len(items))
        cut = _cut(items, start, upto)
        if images is None:
            with_images = next((i for i in range(start, cut) if items[i].get("images")), None)
            if with_images is not None:
                cut = _cut(items, start, with_images + 1)
        if cut <= start:
            return prefix.messages, start
        added = items[start:cut]
        # Extended in place (only the prefix holds the list), so dropped while that runs: a
        # failure half-way must not leave a prefix that says more than it holds.
        self._prefixes.pop(owner)
        messages = prefix.messages
        self._fold(messages, added, images or {}, later_turn=True)
        used = prefix.images
        for item in added:
            if images is not None and item.get("images"):
                for ref in image_parts.refs(item):
                    used[ref["sha256"]] = images.get(ref["sha256"])
        kept = prefix.items
        kept.extend(added)
        self._prefixes.set(owner, Prefix(kept, messages, used))
        return messages, cut


def _cut(items: list[Item], start: int, upto: int) -> int:
    """Where a prefix of `items` may end, at most `upto`, past `start`: the last user message
    before `upto` with only finished items before it (a finished item's dict never changes,
    docs/storage.md); `start` when there is none."""
    cut = start
    for index in range(min(upto, len(items)) - 1, start, -1):
        if items[index].get("type") == USER_MESSAGE:
            cut = index
            break
    for index in range(start, cut):
        item = items[index]
        if "itemId" not in item or item.get("status") not in FINAL_STATUSES:
            return _cut(items, start, index + 1)
    return cut
