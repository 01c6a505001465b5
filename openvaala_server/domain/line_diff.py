"""A unified diff of two line lists whose cost is bounded, whatever the texts.

`difflib` finds the longest matching blocks recursively; where many unique lines alternate with
changed ones (a file rewritten every other line) that takes time quadratic in the lines, minutes
for a 20,000-line file. The approval prompt waits for this diff (docs/protocol.md, Approvals)
and the thread computing it holds the interpreter meanwhile. So past `MAX_MATCH_WORK` the lines
between the common head and tail are first anchored on the lines found once on each side, in
order (as git's "patience" diff does), and only the gaps between anchors go to `difflib`, within
the same budget in all; what the budget does not cover is shown replaced as one block: a true
diff, only not always the smallest.
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Iterator, Sequence
from difflib import Match
from typing import Final

# Differing lines on one side times those on the other, past which they are not matched.
MAX_MATCH_WORK: Final = 1_000_000
CONTEXT_LINES: Final = 3


class _BoundedMatcher(difflib.SequenceMatcher[str]):
    def __init__(self, a: Sequence[str], b: Sequence[str]) -> None:
        super().__init__(None, a, b)
        self._sides = (a, b)

    def get_matching_blocks(self) -> list[Match]:
        a, b = self._sides
        head = 0
        while head < min(len(a), len(b)) and a[head] == b[head]:
            head += 1
        tail = 0
        while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
            tail += 1
        if (len(a) - head - tail) * (len(b) - head - tail) <= MAX_MATCH_WORK:
            return super().get_matching_blocks()
        blocks = [Match(0, 0, head)]
        budget = MAX_MATCH_WORK
        i, j = head, head
        for anchor_a, anchor_b in [*_anchors(a, b, head, tail), (len(a) - tail, len(b) - tail)]:
            work = (anchor_a - i) * (anchor_b - j)
            if work == 1:  # one line each side: a matcher of its own costs more than the line
                blocks.append(Match(i, j, int(a[i] == b[j])))
            elif 0 < work <= budget:
                budget -= work
                gap = difflib.SequenceMatcher(None, a[i:anchor_a], b[j:anchor_b])
                blocks += [Match(i + x, j + y, n) for x, y, n in gap.get_matching_blocks()]
            blocks.append(Match(anchor_a, anchor_b, 1))
            i, j = anchor_a + 1, anchor_b + 1
        blocks[-1] = Match(len(a) - tail, len(b) - tail, tail)
        return [*_merged(blocks), Match(len(a), len(b), 0)]


def _anchors(a: Sequence[str], b: Sequence[str], head: int, tail: int) -> list[tuple[int, int]]:
    """The longest run, in order on both sides, of lines found exactly once on each side
    between `head` and the last `tail` lines (patience sorting)."""
    once_a = _once(a[head : len(a) - tail], head)
    once_b = _once(b[head : len(b) - tail], head)
    pairs = [(i, once_b[line]) for line, i in once_a.items() if line in once_b]
    pairs.sort()
    piles: list[int] = []  # the b index ending each pile
    tops: list[int] = []  # the pair ending each pile
    before: list[int] = []  # per pair, the pair under it in the run (-1: none)
    for index, (_, j) in enumerate(pairs):
        pile = bisect.bisect_left(piles, j)
        before.append(tops[pile - 1] if pile else -1)
        if pile == len(piles):
            piles.append(j)
            tops.append(index)
        else:
            piles[pile] = j
            tops[pile] = index
    run: list[tuple[int, int]] = []
    at = tops[-1] if tops else -1
    while at >= 0:
        run.append(pairs[at])
        at = before[at]
    return run[::-1]


def _once(lines: Sequence[str], offset: int) -> dict[str, int]:
    seen: dict[str, int] = {}
    twice: set[str] = set()
    for index, line in enumerate(lines, offset):
        if line in seen:
            twice.add(line)
        seen[line] = index
    return {line: index for line, index in seen.items() if line not in twice}


def _merged(blocks: list[Match]) -> Iterator[Match]:
    """Matching blocks with the empty ones dropped and adjacent ones joined, as difflib's."""
    current: Match | None = None
    for block in blocks:
        if not block.size:
            continue
        if current and current.a + current.size == block.a and current.b + current.size == block.b:
            current = Match(current.a, current.b, current.size + block.size)
            continue
        if current:
            yield current
        current = block
    if current:
        yield current


def unified_lines(a: Sequence[str], b: Sequence[str], fromfile: str, tofile: str) -> Iterator[str]:
    """The lines of `difflib.unified_diff(a, b, fromfile, tofile)`, matched within bounds."""
    groups = _BoundedMatcher(a, b).get_grouped_opcodes(CONTEXT_LINES)
    for index, group in enumerate(groups):
        if index == 0:
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in a[i1:i2])
                continue
            if tag in ("replace", "delete"):
                yield from ("-" + line for line in a[i1:i2])
            if tag in ("replace", "insert"):
                yield from ("+" + line for line in b[j1:j2])


def _range(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it: "3" for one line, "2,0" for none."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"
