"""Checkpoints and bundles benchmark, against the real daemon.

What it measures
1. Checkpoint cost of a turn that edits 10 files in a 10,000-file repository (100 directories of
   100 files, ~1 KiB each). The demo model's `run: CMD` makes the turn one `shell` call
   (`sed -i` on 10 files): the worst case, a whole-tree snapshot (`git add -A` + `write-tree`
   into the conversation's private store) before and after the call, and a `diff-tree`. Two
   daemons on two copies of the repository, one with `[checkpoints] enabled = false`; turns
   alternate between them, timed from `input/send` to `turn/ended`; the figure is the difference
   of the medians. The whole-tree snapshot "before" is taken as the turn starts, in the background
   (it overlaps the model's answer): measured once with the instant demo model (no overlap
   possible) and once with the demo model streaming its words `--pace-ms` apart, like a real
   model. The first shell turn of a conversation (which stores every file once) is reported
   apart.
   Files the tools name (write_file, edit_file, apply_patch) are captured without git, file by
   file: that cost is measured in-process on the same repository (10 files, state before and
   after, as the daemon does around each call).
2. Export and import of a conversation of 10,000 items (generated journals, ~1 KiB messages)
   through `conversation/export` and `conversation/import` into a second daemon, against a raw
   copy of the conversation directory (`shutil.copytree`, and the same with an fsync of every
   file, which import does). Medians of N rounds. Import answers once the conversation is
   durably in place; its index entry (counts, searchable text) is written behind the answer and
   every read of the index waits for it: "until found" is the import plus a `conversation/list`
   that searches a word of its messages, the time until a user can find it.

Goals (issue 23): checkpoint cost under 50 ms added per turn; export and import at least 1/3 of
raw copy speed. Export is judged against the plain copy; import against the copy that fsyncs
(an import must be durable before it answers, a plain copy is not); both ratios are printed.

Run: ``python bench/checkpoints.py [--rounds N] [--files N] [--items N]``
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
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._daemon import DEMO_CONFIG, BenchDaemon, RawClient
from openvaala_server.domain.ids import new_id
from openvaala_server.domain.records import utc_now
from openvaala_server.store.checkpoints import SnapshotStore, watched_changes
from openvaala_server.store.paths import DataDir
from openvaala_server.store.tree_watch import TreeWatch

OFF = "\n[checkpoints]\nenabled = false\n"


def make_repo(root: Path, files: int) -> list[str]:
    per_dir = 100
    names = []
    for i in range(files):
        d = root / f"pkg{i // per_dir:03d}"
        d.mkdir(exist_ok=True)
        path = d / f"mod{i % per_dir:03d}.py"
        path.write_text(f"# module {i}\n" + f"def handler_{i}(x):\n    return x + 1\n" * 20)
        names.append(str(path.relative_to(root)))
    return names


async def run_turn(client: RawClient, cid: str, text: str) -> float:
    start = time.perf_counter()
    await client.send("input/send", {"conversationId": cid, "text": text, "mode": "queue"})
    while True:
        message = orjson.loads(await client.ws.recv())
        if message.get("method") == "turn/ended":
            status = message["params"]["status"]
            if status != "completed":
                raise RuntimeError(f"turn {status}: {message['params']}")
            return time.perf_counter() - start


async def turn_cost(rounds: int, files: int, pace_ms: int = 0) -> dict[str, Any]:
    config = DEMO_CONFIG.replace("pace_ms = 0", f"pace_ms = {pace_ms}")
    on, off = BenchDaemon(config), BenchDaemon(config + OFF)
    try:
        names: list[str] = []
        for d in (on, off):
            names = make_repo(d.workdir, files)
        targets = names[:: max(1, len(names) // 10)][:10]
        on.start()
        off.start()
        clients, cids = [], []
        for d in (on, off):
            client = await RawClient.connect(d.address, d.token)
            cid = (await client.request("conversation/create", {"cwd": str(d.workdir)}))[
                "conversation"
            ]["conversationId"]
            await client.request("conversation/subscribe", {"conversationId": cid})
            clients.append(client)
            cids.append(cid)
        first = [await run_turn(c, cid, "run: true") for c, cid in zip(clients, cids, strict=True)]
        times: list[list[float]] = [[], []]
        for r in range(rounds):
            command = f"run: sed -i '1s/.*/# round {r}/' " + " ".join(targets)
            for k in (0, 1) if r % 2 == 0 else (1, 0):
                times[k].append(await run_turn(clients[k], cids[k], command))
        report = await clients[0].request("conversation/checkpoints", {"conversationId": cids[0]})
        changed = {f["path"] for t in report["turns"] for f in t["files"]}
        assert changed == set(targets), changed
        for c in clients:
            await c.close()
        return {
            "first_on": first[0],
            "first_off": first[1],
            "on": statistics.median(times[0]),
            "off": statistics.median(times[1]),
            "store_bytes": report["bytes"],
        }
    finally:
        on.cleanup()
        off.cleanup()


def file_capture_cost(files: int, rounds: int) -> float:
    """In-process: the daemon's per-file capture of 10 named files, before and after."""
    with tempfile.TemporaryDirectory(prefix="ovbench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        names = make_repo(root, files)
        targets = names[:: max(1, len(names) // 10)][:10]
        conv = Path(tmp) / "conv"
        conv.mkdir()
        store = SnapshotStore(conv, root)
        store.ensure()
        costs = []
        for r in range(rounds):
            start = time.perf_counter()
            for name in targets:
                store.state(name, store=True)
            costs.append(time.perf_counter() - start)
            for name in targets:
                (root / name).write_text(f"changed {r}\n")
            start = time.perf_counter()
            for name in targets:
                store.state(name, store=True)
            costs[-1] += time.perf_counter() - start
        return statistics.median(costs)


async def shell_capture_cost(files: int, rounds: int) -> dict[str, float]:
    """In-process, the daemon's own code path for a `shell` call that edits 10 files: what
    the call pays after it ran (the changes compared with the turn's snapshot) and what the next
    turn's start pays (its snapshot), with the file watch (store/tree_watch.py: git is asked
    about the paths it saw) and with a scan of the whole tree (git add -A), on two private
    stores of the same repository. Medians of `rounds`."""
    with tempfile.TemporaryDirectory(prefix="ovbench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        names = make_repo(root, files)
        targets = names[:: max(1, len(names) // 10)][:10]
        # A generous limit: the first snapshot stores every file, minutes on a loaded machine.
        watched = SnapshotStore(Path(tmp) / "a", root, timeout_s=600)
        scanned = SnapshotStore(Path(tmp) / "b", root, timeout_s=600)
        for store in (watched, scanned):
            store.git_dir.parent.mkdir()
        watch = TreeWatch(root, ignored=await watched.ignored_dirs())
        watch.start()
        watch.take()
        tree_a, tree_b = await watched.snapshot(None), await scanned.snapshot(None)
        costs: dict[str, list[float]] = {
            "after": [],
            "after_full": [],
            "start": [],
            "start_full": [],
        }
        for r in range(rounds):
            for name in targets:  # what `sed -i` does: a new file renamed over the old one
                path = root / name
                tmp_path = path.with_name(f".sed{r}")
                tmp_path.write_text(f"# round {r}\n" + path.read_text().split("\n", 1)[1])
                tmp_path.replace(path)
            start = time.perf_counter()
            taken = watch.take()
            assert taken is not None
            narrow = await watched_changes(watched, watch, tree_a, taken)
            costs["after"].append(time.perf_counter() - start)
            start = time.perf_counter()
            full = await scanned.changes_since(tree_b, None)
            costs["after_full"].append(time.perf_counter() - start)
            assert sorted(narrow) == sorted(full) and len(full) == len(targets), (narrow, full)
            start = time.perf_counter()
            tree_a = await watched.snapshot(watch.take())
            costs["start"].append(time.perf_counter() - start)
            start = time.perf_counter()
            tree_b = await scanned.snapshot(None)
            costs["start_full"].append(time.perf_counter() - start)
        watch.close()
        return {k: statistics.median(v) for k, v in costs.items()}


def make_conversation(home: Path, items: int) -> tuple[str, int]:
    data_dir = DataDir(home)
    data_dir.ensure()
    cid, sid = new_id(), new_id()
    directory = data_dir.conversation_dir(cid)
    directory.mkdir()
    ts = utc_now()
    created = {
        "seq": 1,
        "ts": ts,
        "type": "conversation_created",
        "conversationId": cid,
        "cwd": str(home),
        "agent": "default",
        "model": "demo",
        "title": "bench",
        "titleSource": "auto",
        "rootSessionId": sid,
        "forkedFrom": None,
        "formatVersion": 1,
    }
    lines = [orjson.dumps(created)]
    session = []
    seq = 0
    for t in range(items // 2):
        tid = new_id()
        lines.append(
            orjson.dumps(
                {
                    "seq": len(lines) + 1,
                    "ts": ts,
                    "type": "turn_started",
                    "turnId": tid,
                    "sessionId": sid,
                }
            )
        )
        lines.append(
            orjson.dumps(
                {
                    "seq": len(lines) + 1,
                    "ts": ts,
                    "type": "turn_ended",
                    "turnId": tid,
                    "sessionId": sid,
                    "status": "completed",
                }
            )
        )
        for kind in ("user_message", "agent_message"):
            seq += 1
            item = {
                "itemId": new_id(),
                "type": kind,
                "sessionId": sid,
                "turnId": tid,
                "createdAt": ts,
                "status": "completed",
                "text": f"message {t} " + "the parser buffers the tail " * 35,
            }
            session.append(orjson.dumps({"seq": seq, "ts": ts, "type": "item", "item": item}))
    (directory / "metadata.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (directory / f"{sid}.jsonl").write_bytes(b"\n".join(session) + b"\n")
    size = sum(p.stat().st_size for p in directory.iterdir())
    return cid, size


def raw_copy(source: Path, target: Path, sync: bool) -> float:
    start = time.perf_counter()
    shutil.copytree(source, target)
    if sync:
        for path in target.iterdir():
            fd = os.open(path, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
    return time.perf_counter() - start


async def bundle_cost(rounds: int, items: int) -> dict[str, Any]:
    source = BenchDaemon(DEMO_CONFIG)
    cid, size = make_conversation(source.home, items)
    source.start()
    results: dict[str, list[float]] = {
        "export": [],
        "import": [],
        "found": [],
        "copy": [],
        "copy_fsync": [],
    }
    try:
        client = await RawClient.connect(source.address, source.token)
        for r in range(rounds):
            work = Path(source._tmp.name)
            out = work / f"bundle-{r}.tar"
            start = time.perf_counter()
            await client.request("conversation/export", {"conversationId": cid, "path": str(out)})
            results["export"].append(time.perf_counter() - start)
            target = BenchDaemon(DEMO_CONFIG).start()
            try:
                other = await RawClient.connect(target.address, target.token)
                await other.request("conversation/list", {})  # its store is open and settled
                start = time.perf_counter()
                await other.request("conversation/import", {"path": str(out), "cwd": str(work)})
                results["import"].append(time.perf_counter() - start)
                found = await other.request("conversation/list", {"search": "buffers"})
                results["found"].append(time.perf_counter() - start)
                assert [c["conversationId"] for c in found["conversations"]] == [cid], found
                assert found["conversations"][0]["messageCount"] == items, found
                await other.close()
            finally:
                target.cleanup()
            conv_dir = DataDir(source.home).conversation_dir(cid)
            results["copy"].append(raw_copy(conv_dir, work / f"copy-{r}", sync=False))
            results["copy_fsync"].append(raw_copy(conv_dir, work / f"copyf-{r}", sync=True))
            out.unlink()
        await client.close()
    finally:
        source.cleanup()
    medians = {k: statistics.median(v) for k, v in results.items()}
    return {"bytes": size, **medians}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--pace-ms", type=int, default=30, help="the paced model's word pause")
    parser.add_argument(
        "--only",
        choices=["capture", "turns", "bundles"],
        help="capture: the in-process shell capture at 1k and 10k files; turns: through the "
        "daemon; bundles: export and import",
    )
    args = parser.parse_args()
    if args.only in (None, "capture"):
        for files in (1_000, 10_000):
            c = asyncio.run(shell_capture_cost(files, args.rounds))
            print(f"shell call editing 10 of {files} files (in-process, median of {args.rounds}):")
            print(
                f"  after the call: {c['after'] * 1000:6.1f} ms with the file watch, "
                f"{c['after_full'] * 1000:6.1f} ms scanning the tree   (goal < 50 ms)"
            )
            print(
                f"  next turn's snapshot: {c['start'] * 1000:6.1f} ms with the file watch, "
                f"{c['start_full'] * 1000:6.1f} ms scanning (in the background)"
            )
    if args.only in (None, "turns"):
        turns(args)
    if args.only in (None, "bundles"):
        bundles(args)


def turns(args: argparse.Namespace) -> None:
    turn = asyncio.run(turn_cost(args.rounds, args.files))
    print(f"checkpoints: a shell turn editing 10 of {args.files} files, median of {args.rounds}")
    print("  (instant model: the snapshot taken as the turn starts cannot overlap its answer)")
    print(f"  turn with checkpoints    {turn['on'] * 1000:8.1f} ms")
    print(f"  turn without             {turn['off'] * 1000:8.1f} ms")
    added = (turn["on"] - turn["off"]) * 1000
    print(f"  added                    {added:8.1f} ms   (goal < 50 ms)")
    print(
        f"  first shell turn of a conversation (stores every file once): "
        f"{turn['first_on'] * 1000:.0f} ms with, {turn['first_off'] * 1000:.0f} ms without; "
        f"store {turn['store_bytes'] / 1e6:.1f} MB"
    )
    paced = asyncio.run(turn_cost(args.rounds, args.files, pace_ms=args.pace_ms))
    added = (paced["on"] - paced["off"]) * 1000
    print(
        f"  with a model that streams its answer ({args.pace_ms} ms a word, so the snapshot "
        f"overlaps it): {paced['on'] * 1000:.1f} against {paced['off'] * 1000:.1f} ms, "
        f"added {added:.1f} ms"
    )
    per_file = file_capture_cost(args.files, args.rounds)
    print(f"  10 files named by a tool, before + after (in-process): {per_file * 1000:.2f} ms")


def bundles(args: argparse.Namespace) -> None:
    cost = asyncio.run(bundle_cost(max(3, args.rounds // 3), args.items))
    mb = cost["bytes"] / 1e6
    print(f"bundles: a conversation of {args.items} items ({mb:.1f} MB), median")
    for key in ("copy", "copy_fsync", "export", "import", "found"):
        print(f"  {key:<12} {cost[key] * 1000:8.1f} ms  {mb / cost[key]:8.1f} MB/s")
    print(
        f"  export at {cost['copy'] / cost['export']:.2f} of raw copy speed (goal >= 0.33; "
        f"{cost['copy_fsync'] / cost['export']:.2f} of the fsync'd copy)"
    )
    print(
        f"  import at {cost['copy_fsync'] / cost['import']:.2f} of a copy that fsyncs as import "
        f"does (goal >= 0.33; {cost['copy'] / cost['import']:.2f} of the plain copy); until "
        f"found by a search: {cost['copy_fsync'] / cost['found']:.2f}"
    )


if __name__ == "__main__":
    main()
