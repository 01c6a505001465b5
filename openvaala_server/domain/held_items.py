"""Joining a history read back from disk with the items a session held meanwhile (the read may
have begun before the last of them were saved): pure, so it is tested without a store."""

from __future__ import annotations

from openvaala_server.domain import records as r


def joined(read: list[r.Item], held: list[r.Item]) -> list[r.Item]:
    """The history read from disk, plus any of the held tail saved after the read began. The
    held items themselves are kept where the read has them: the providers' assembled prefixes
    and the usage estimates know items by identity (runtime/warmup.py)."""
    if not held:
        return read
    first = held[0]["itemId"]
    at = next((i for i in range(len(read) - 1, -1, -1) if read[i]["itemId"] == first), None)
    if at is not None and [i["itemId"] for i in read[at : at + len(held)]] == [
        i["itemId"] for i in held[: len(read) - at]
    ]:
        return [*read[:at], *held, *read[at + len(held) :]]
    last = held[-1]["itemId"]
    if any(i["itemId"] == last for i in read[-len(held) :]):
        return read
    on_disk = {i["itemId"] for i in read[-len(held) :]}
    return read + [i for i in held if i["itemId"] not in on_disk]
