"""Ctrl+C while the program's modules load (docs/design.md, "Ctrl+C while openvaala starts").

Loading the modules takes the first fraction of a second of every command (more under load).
Python's own Ctrl+C handler raises KeyboardInterrupt wherever the import happens to be: a
traceback through an import the user never asked about, or a crash when it is raised inside a C
extension's module init (orjson's segfaults). Until the command is ready to handle Ctrl+C, the
system's default applies instead: the process ends at once, silently, with the status a shell
reports for an interrupted program (130). Nothing has been started yet that would need a stop.
"""

from __future__ import annotations

import signal


def ends_the_program() -> None:
    """From here until `interruptible`, Ctrl+C ends the process as the system does."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interruptible() -> None:
    """Ctrl+C raises KeyboardInterrupt again (Python's handler), once the command handles it;
    a handler someone else set (a test runner, an embedding program) is left alone."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_DFL:
        signal.signal(signal.SIGINT, signal.default_int_handler)
