"""The cyclic garbage collector's schedule for a long-running daemon (docs/design.md,
"Performance at scale", issue 17 point 6).

CPython's cyclic collector stops the process while it runs, and a collection of the oldest
generation walks every container object alive. After start-up that is a few hundred thousand
objects — modules, classes, functions, the configuration, the app — none of which will ever be
garbage; with a loaded machine such a walk took 30–270 ms here, each one a stall of every stream
to every client (bench/fanout_load.py logs the daemon's collections).

- Once the daemon has started, `gc.freeze()` moves everything alive into the permanent
  generation, which collections never walk. Frozen objects are still freed by reference
  counting as usual; only a cycle among them would stay, and start-up leaves none worth it.
- The youngest generation is collected after 10,000 net new container objects instead of 700:
  streaming creates and frees many small dicts, which reference counting frees anyway, and each
  collection costs a pause however little it finds.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000


def settle() -> None:
    """Called once the daemon is ready to serve. No collection first: walking everything once
    is the very pause this avoids (what start-up left as garbage is a few kilobytes)."""
    _, middle, old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
