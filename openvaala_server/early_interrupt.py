"""Ctrl+C while the program's modules load (docs/design.md, "Ctrl+C while openvaala starts").

Loading the modules takes the first fraction of a second of every command (more under load).
Python's own Ctrl+C handler raises KeyboardInterrupt wherever the import happens to be: a
traceback through an import the user never asked about, or a crash when it is raised inside a C
extension's module init (orjson's segfaults). Until the command is ready to handle Ctrl+C, the
system's default applies instead: the process ends at once, silently, with the status a shell
reports for an interrupted program (130). Nothing has been started yet that would need a stop.
"""

from __future__ import annotations

import os
import signal
from types import FrameType


def ends_the_program() -> None:
    """From here until `interruptible`, Ctrl+C ends the process as the system does."""
    # A handler, not SIG_DFL itself: a Ctrl+C that came just before this line is still pending
    # in Python (its C handler caught it, its Python handler had not run yet), and Python runs
    # the handler installed when it gets to it. Were that SIG_DFL, Python would drop the
    # signal, and `serve` would go on serving, deaf to the Ctrl+C the user pressed.
    signal.signal(signal.SIGINT, _end_now)


def _end_now(signum: int, _frame: FrameType | None) -> None:
    """Run between two Python instructions, never inside a C extension's init: the system's
    default then ends the process, as an interrupted program."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def interruptible() -> None:
    """Ctrl+C raises KeyboardInterrupt again (Python's handler), once the command handles it;
    a handler someone else set (a test runner, an embedding program) is left alone."""
    if signal.getsignal(signal.SIGINT) is _end_now:
        signal.signal(signal.SIGINT, signal.default_int_handler)
