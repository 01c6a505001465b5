"""grep benchmark: the `grep` tool over a 50k-file tree against ripgrep alone.

What it measures
    A generated tree of FILES files (default 50,000: 500 directories of 100 small source-like
    files, ~1 KiB each, a .gitignore that leaves out one directory in ten), searched in one run,
    interleaved search by search so a change in the machine's load hits both alike:
    - rg alone: `rg` started from this process with asyncio, with the flags the tool passes
      (`--no-config --no-require-git --hidden --glob=!.git --null --line-number`), its whole
      output read from the pipe: the floor for a search through ripgrep;
    - grep tool: the product's ``GrepTool().run({"pattern": …}, ctx)`` (ripgrep found on PATH),
      timed from the call to the returned result (the result text built and bounded).
    Two patterns: a rare one (3 matching lines in the whole tree: ripgrep's walk dominates) and a
    common one (a match in every file: the tool stops at its 100-match limit and kills ripgrep,
    while rg alone prints all of them). The Python fallback is timed once on the rare pattern
    for information (it is what runs where ripgrep is not installed). Figures are medians over
    N searches after one warm-up search each (the tree is then in the page cache).

Goal (issue 18): the tool within 1.5x of ripgrep alone.

Run: ``python bench/grep.py [--files N] [--runs N]``

Results on this machine: see the report of the change that added this file; rerun for current
figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openvaala_server.tools.base import ToolContext
from openvaala_server.tools.search import GrepTool

RARE = "needle_[0-9]+_found"
COMMON = "def handler_"


def make_tree(root: Path, files: int) -> None:
    per_dir = 100
    (root / ".gitignore").write_text("ignored_*/\n*.tmp\n")
    for d in range((files + per_dir - 1) // per_dir):
        folder = root / (f"ignored_{d}" if d % 10 == 9 else f"pkg_{d}")
        folder.mkdir()
        for f in range(min(per_dir, files - d * per_dir)):
            body = "".join(
                f"    value_{n} = compute({d}, {f}, {n})  # some text to scan through\n"
                for n in range(12)
            )
            text = f"def handler_{d}_{f}(request):\n{body}    return value_0\n"
            if (d, f) in ((3, 7), (250, 50), (498, 99)):
                text += f"# needle_{d}_found\n"
            (folder / f"module_{f}.py").write_text(text)


async def rg_alone(rg: str, root: Path, pattern: str) -> float:
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        rg,
        "--no-config",
        "--no-require-git",
        "--hidden",
        "--glob=!.git",
        "--null",
        "--line-number",
        "--regexp",
        pattern,
        cwd=root,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
    )
    await process.communicate()
    return (time.perf_counter() - started) * 1000


async def tool(grep: GrepTool, ctx: ToolContext, pattern: str) -> float:
    started = time.perf_counter()
    result = await grep.run({"pattern": pattern}, ctx)
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error or result.output.startswith("No matches"):
        raise SystemExit(f"the search failed: {result.output}")
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    rg = shutil.which("rg")
    if rg is None:
        raise SystemExit("ripgrep (rg) is needed for this benchmark")
    root = Path(tempfile.mkdtemp(prefix="openvaala-bench-grep-"))
    try:
        started = time.perf_counter()
        make_tree(root, args.files)
        print(f"tree: {args.files} files in {time.perf_counter() - started:.1f} s; {rg}")
        ctx = ToolContext(cwd=root, emit_output=lambda _: None)
        grep = GrepTool()
        for name, pattern in (("rare", RARE), ("common", COMMON)):
            alone: list[float] = []
            ours: list[float] = []
            for run in range(args.runs + 1):
                a, b = await rg_alone(rg, root, pattern), await tool(grep, ctx, pattern)
                if run:  # the first is the warm-up
                    alone.append(a)
                    ours.append(b)
            p_alone, p_ours = statistics.median(alone), statistics.median(ours)
            ratio = p_ours / p_alone
            verdict = "ok" if ratio <= 1.5 else "MISSED"
            print(
                f"{name:<7} {pattern!r:<24} rg alone {p_alone:8.1f} ms   grep tool "
                f"{p_ours:8.1f} ms   ratio {ratio:4.2f}  (goal <= 1.5: {verdict})"
            )
        fallback = GrepTool(ripgrep=lambda: None)
        started = time.perf_counter()
        result = await fallback.run({"pattern": RARE}, ctx)
        elapsed = (time.perf_counter() - started) * 1000
        lines = len(result.output.splitlines())
        print(f"python fallback, rare pattern, once: {elapsed:.0f} ms ({lines} lines)")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} CPUs")


if __name__ == "__main__":
    asyncio.run(main())
