"""What of a terminal's output is new since the last look (docs/editors.md, "Terminals").

ACP has no notification for a terminal's output: the agent reads all of it so far with
`terminal/output`, which the editor cuts from the start past the byte limit the agent set. So
the output read one time is not always the earlier one plus more: when the start was cut, the
new part begins after the last lines seen before; when those are cut too (more was printed
between two looks than the editor keeps), what follows them cannot be told apart, and nothing
is passed on until the next look (the command's result still has its head and tail). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

ANCHOR = 256  # characters of the start of a cut output looked for in what was seen


@dataclass
class OutputTail:
    seen: str = ""  # the output as last read (its end is where the next new part starts)

    def new(self, output: str) -> str:
        """The part of `output` (the terminal's output now) not passed on yet."""
        before, self.seen = self.seen, output
        if output.startswith(before):
            return output[len(before) :]
        # Cut from the start: `output` begins somewhere in `before`; the earliest place where
        # all the rest of `before` matches is where (the longest overlap).
        head = output[:ANCHOR]
        at = before.find(head)
        while at >= 0:  # overlaps at least as long as the head
            if output.startswith(before[at:]):
                return output[len(before) - at :]
            at = before.find(head, at + 1)
        for at in range(max(len(before) - len(head) + 1, 0), len(before)):  # shorter ones
            if output.startswith(before[at:]):
                return output[len(before) - at :]
        return ""
