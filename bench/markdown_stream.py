"""Drawing a long streamed reply in the TUI: the cost of one frame as the reply grows.

What it measures
    A Markdown reply of about 2,400 lines (sections with a heading, a paragraph, a list and a
    code block) grows by `--step` characters per frame, as a fast model's deltas do between two
    of the TUI's frames (`FRAME_S`, 30 ms). At each frame the agent message's renderable is
    brought up to date and rendered at 118 columns, as `AgentMessage._draw_stream` does:

    - whole: the reply so far rendered at once (`RenderedMarkdown`, how the TUI drew a
      streaming reply before, and still draws a finished one from the history);
    - blocks: `StreamedMarkdown` (finished blocks rendered once, only the rest again).

    Printed: the frame time when the reply has 500, 1,000 and 2,000 lines (median of the frames
    near each), the worst frame, and the CPU of the whole stream; the ratio whole / blocks.
    A frame longer than ~50 ms is a key press that waits (issue 8's streaming goal).

Run: ``python bench/markdown_stream.py [--step 400]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Protocol

from rich.console import Console, ConsoleOptions
from rich.segment import Segment

from openvaala_tui.widgets.markdown_render import RenderedMarkdown, StreamedMarkdown

SECTION = """## Section {n}

A paragraph with **bold**, `inline code` and enough words to wrap over two lines at this
width, as replies explaining code tend to have.

- a first point about section {n}
- a second point, a little longer than the first one

```python
def section_{n}(value: int) -> int:
    # a comment inside the code block

    return value * {n}
```

"""


class Renderable(Protocol):
    def lines(self, console: Console, options: ConsoleOptions) -> list[list[Segment]]: ...


def stream(text: str, step: int, draw: Callable[[str], Renderable]) -> list[tuple[int, float]]:
    """(lines so far, seconds) for each frame of `text` arriving `step` characters at a time."""
    console = Console(width=118, file=open("/dev/null", "w"), force_terminal=True)  # noqa: SIM115
    options = console.options
    frames = []
    for end in range(step, len(text) + step, step):
        shown = text[:end]
        started = time.perf_counter()
        draw(shown).lines(console, options)
        frames.append((shown.count("\n"), time.perf_counter() - started))
    return frames


def near(frames: list[tuple[int, float]], lines: int) -> float:
    """Median frame time over the frames within 5% of `lines` lines."""
    around = [s for n, s in frames if abs(n - lines) <= lines * 0.05]
    return statistics.median(around) if around else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=400, help="characters per frame")
    args = parser.parse_args()
    text = "".join(SECTION.format(n=n) for n in range(150))
    print(f"reply: {text.count(chr(10)):,} lines, {len(text):,} characters, +{args.step} a frame")

    streamed = StreamedMarkdown()

    def blocks(shown: str) -> StreamedMarkdown:
        streamed.set_text(shown)
        return streamed

    results = {}
    for name, draw in (("whole", RenderedMarkdown), ("blocks", blocks)):
        cpu = time.process_time()
        frames = stream(text, args.step, draw)
        results[name] = (frames, time.process_time() - cpu)
    print(f"{'frame time at':<26}{'whole':>10}{'blocks':>10}{'ratio':>8}")
    for lines in (500, 1000, 2000):
        whole, block = near(results["whole"][0], lines), near(results["blocks"][0], lines)
        label = f"  {lines:,} lines"
        print(f"{label:<26}{whole * 1e3:8.1f}ms{block * 1e3:8.1f}ms{whole / block:7.0f}×")
    worst = {name: max(s for _, s in frames) for name, (frames, _) in results.items()}
    ratio = worst["whole"] / worst["blocks"]
    print(
        f"{'  worst frame':<26}{worst['whole'] * 1e3:8.1f}ms{worst['blocks'] * 1e3:8.1f}ms"
        f"{ratio:7.0f}×"
    )
    whole_cpu, block_cpu = results["whole"][1], results["blocks"][1]
    print(
        f"{'CPU for the whole stream':<26}{whole_cpu:9.2f}s{block_cpu:9.2f}s"
        f"{whole_cpu / block_cpu:7.0f}×"
    )


if __name__ == "__main__":
    main()
