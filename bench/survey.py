"""The first `shell` call of a conversation in a huge directory, against the real daemon.

Before a conversation's first whole-tree snapshot the checkpoints survey its working directory
(store/survey.py): more files than `[checkpoints] max_files` and `shell` calls are not captured.
This measures what that costs the first `shell` call, in three directories:

1. a tree of 200,000 small files (2,000 folders of 100), made once under the temporary
   directory and kept for later runs (`--trees`);
2. the same, with a git repository at its root (a `.gitignore` committed);
3. `/`, the disk's root.

For each, a fresh daemon with the demo model (instant answers) gets a conversation there and
one turn `run: ls`; the figure is the time from `input/send` to `turn/ended`, the first shell
turn against a second one (the survey is done once per load), and what `conversation/checkpoints`
says was skipped. The survey alone is also timed in-process (`SnapshotStore.survey`, the
daemon's code, with the default limits), beside what the survey was before (`git ls-files` of
the tree with a private repository, read until past the cap: git prints nothing until it has
walked the whole tree).

Run: ``python bench/survey.py [--trees DIR] [--files N]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._daemon import DEMO_CONFIG, BenchDaemon, RawClient
from bench.checkpoints import run_turn
from openvaala_server.store.checkpoints import SnapshotStore


def make_tree(root: Path, files: int, repo: bool) -> Path:
    """`files` one-line files, 100 a folder, made once (`.done` marks a finished tree)."""
    if (root / ".done").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        folder = root / f"d{i // 10_000:02d}" / f"s{i // 100 % 100:02d}"
        if i % 100 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i % 100}.txt").write_text(f"file {i}\n")
    if repo:
        (root / ".gitignore").write_text("*.log\n")
        for command in (
            ["init", "-q"],
            ["add", ".gitignore"],
            ["-c", "user.name=bench", "-c", "user.email=b@b", "commit", "-qm", "init"],
        ):
            subprocess.run(["git", *command], check=True, cwd=root)
    (root / ".done").write_text("")
    return root


async def first_shell_call(cwd: Path) -> tuple[float, float, list[str]]:
    daemon = BenchDaemon(DEMO_CONFIG)
    try:
        daemon.start()
        client = await RawClient.connect(daemon.address, daemon.token)
        created = await client.request("conversation/create", {"cwd": str(cwd)})
        cid = created["conversation"]["conversationId"]
        await client.request("conversation/subscribe", {"conversationId": cid})
        first = await run_turn(client, cid, "run: ls")
        second = await run_turn(client, cid, "run: ls")
        report = await client.request("conversation/checkpoints", {"conversationId": cid})
        await client.close()
        return first, second, report["skipped"]
    finally:
        daemon.cleanup()


def git_listing(cwd: Path, cap: int = 100_000) -> float:
    """The survey before store/survey.py: `git ls-files`, read until past the cap, then killed."""
    with tempfile.TemporaryDirectory(prefix="ovbench-") as tmp:
        subprocess.run(["git", "init", "-q", "--bare", tmp], check=True)
        start = time.perf_counter()
        options = ["-z", "--cached", "--others", "--exclude-standard"]
        listing = subprocess.Popen(
            ["git", f"--git-dir={tmp}", f"--work-tree={cwd}", "ls-files", *options, "--", "."],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert listing.stdout is not None
        names = 0
        while (chunk := listing.stdout.read(1 << 16)) and names <= cap:
            names += chunk.count(b"\0")
        listing.kill()
        listing.wait()
        return time.perf_counter() - start


async def survey_alone(cwd: Path) -> tuple[float, str | None]:
    with tempfile.TemporaryDirectory(prefix="ovbench-") as tmp:
        store = SnapshotStore(Path(tmp), cwd)
        start = time.perf_counter()
        verdict = await store.survey(100_000, 512 << 20)
        return time.perf_counter() - start, verdict


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trees", default=os.path.join(tempfile.gettempdir(), "ovbench-survey"))
    parser.add_argument("--files", type=int, default=200_000)
    args = parser.parse_args()
    trees = Path(args.trees)
    places = [
        (f"{args.files:,} files", make_tree(trees / "plain", args.files, repo=False)),
        (f"{args.files:,} files, git repo", make_tree(trees / "repo", args.files, repo=True)),
        ("/", Path("/")),
    ]
    print("the first shell call of a conversation (`run: ls`, demo model), seconds")
    print(
        f"  {'directory':<28} {'git ls-files':>12} {'survey':>8} {'1st turn':>9} {'2nd turn':>9}"
        "  skipped"
    )
    for name, cwd in places:
        before = git_listing(cwd)
        alone, _verdict = asyncio.run(survey_alone(cwd))
        first, second, skipped = asyncio.run(first_shell_call(cwd))
        why = skipped[0] if skipped else "-"
        print(f"  {name:<28} {before:12.2f} {alone:8.2f} {first:9.2f} {second:9.2f}  {why}")


if __name__ == "__main__":
    main()
