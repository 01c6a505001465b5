"""The cyclic garbage collector's schedule for a long-running daemon (docs/design.md,
"Performance at scale", issue 17 point 6).

CPython's cyclic collector stops the process while it runs, and a collection of the oldest
generation walks every container object alive. After start-up that is a few hundred thousand
objects — modules, classes, functions, the configuration, the app — none of which will ever be
garbage; with a loaded machine such a walk took 50–270 ms here, each one a stall of every stream
to every client (bench/fanout_load.py logs the daemon's collections).

Once the daemon has started, `gc.freeze()` moves everything alive into the permanent generation,
which collections never walk. Frozen objects are still freed by reference counting as usual;
only a cycle among them would stay, and start-up leaves none worth it. No collection first:
walking everything once is the very pause this avoids.

Before that, during the start itself, the collector does not run at all (`pause`): the imports
make ~100 young collections that find next to nothing (a few hundred objects) and cost ~6% of the
CPU to ready (docs/design.md, "A cold exec, end to end"). `settle` turns it back on.

The young generations keep their default thresholds: collecting after 10,000 new objects
instead of 700 was tried and made each young collection a pause of 20–40 ms under load instead
of a few (bench/fanout_load.py, same hour).
"""

from __future__ import annotations

import gc


def pause() -> None:
    """Called first thing by `openvaala serve`: no collection until `settle`."""
    gc.disable()


def settle() -> None:
    """Called once the daemon is ready to serve: what start-up made is never walked again, and
    the collector runs again (`pause`)."""
    gc.freeze()
    gc.enable()
