"""Type-check a probe module with the project's mypy configuration as if it were one of the
product's own modules (`--shadow-file`), so the per-package overrides of pyproject.toml apply to
it (docs/design.md, "Typed seams")."""

from __future__ import annotations

from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[2]


def errors_in_place_of(target: str, probe: str, tmp_path: Path) -> list[tuple[int, bool]]:
    """The errors mypy reports on `probe` checked as the module at `target` (a path from the
    repository's root): (line, whether it is the `deprecated` code), in order."""
    path = tmp_path / "probe.py"
    path.write_text(probe)
    shadowed = ROOT / target
    out, _err, _code = api.run(
        [
            f"--config-file={ROOT / 'pyproject.toml'}",
            "--follow-imports=silent",
            f"--cache-dir={tmp_path / 'cache'}",
            "--shadow-file",
            str(shadowed),
            str(path),
            str(shadowed),
        ]
    )
    errors = [line for line in out.splitlines() if ": error:" in line]
    return [(int(e.split(":")[1]), e.endswith("[deprecated]")) for e in errors]
