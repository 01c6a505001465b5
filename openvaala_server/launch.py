"""The program's entry point: `openvaala` and `python -m openvaala_server`. Its first step, before
any other module loads, makes an early Ctrl+C end the program quietly (`early_interrupt`)."""

from __future__ import annotations

from openvaala_server.early_interrupt import ends_the_program


def main() -> int:
    ends_the_program()
    from openvaala_server.cli import main as run_command

    return run_command()
