"""Export and import through real daemons: a fork made after a compaction is exported with the
original that holds its older history and with its attachments, imported into a second data
directory (CLI, protocol, HTTP), read back whole with its tree; a second import asks keep-both or
skip; hostile bundles are refused with nothing written."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import orjson
import pytest

from openvaala_server.client import Client, RpcError
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.errors import error_data
from tests.support.events import new_conversation, run_turn

BIG = "x" * 2000
SHOT = b"\x89PNG\r\n\x1a\n fake image"
SHOT_SHA = hashlib.sha256(SHOT).hexdigest()


def _config(fake: FakeProvider) -> str:
    return (
        fake.config_toml("fake", context_window=1000, max_output_tokens=100)
        + '\n[agents.default]\ndescription = "test agent"\nmodel = "fake"\n'
        + "base_instructions = false\n"  # a window this small is the base prompt's alone
    )


async def _read(client: Client, cid: str) -> list[Any]:
    return list((await client.request("conversation/read", {"conversationId": cid}))["items"])


def _texts(items: list[dict[str, Any]]) -> list[Any]:
    return [i.get("text") for i in items if i["type"] != "summary"]


def _listing(d: Daemon) -> list[str]:
    return sorted(p.name for p in (d.home / "conversations").iterdir())


async def _source(daemon_factory: Any, fake: FakeProvider) -> tuple[Daemon, Client, str, str]:
    """A conversation compacted once, and a fork of it that reads its older history there."""
    d: Daemon = daemon_factory(config=_config(fake), name="source")
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    fake.enqueue(
        Reply().text("first answer").usage(300, 20),
        Reply().text("SUMMARY-ONE"),
        Reply().text("second answer").usage(400, 20),
    )
    await run_turn(client, cid, "hello")
    await run_turn(client, cid, BIG)
    forked: Any = (await client.request("conversation/fork", {"conversationId": cid}))[
        "conversation"
    ]
    fid = forked["conversationId"]
    assert forked["forkedFrom"]["olderHistory"]["conversationId"] == cid
    # An attachment stored in the conversation's directory travels with it.
    (d.home / "conversations" / fid / "attachments").mkdir()
    (d.home / "conversations" / fid / "attachments" / f"{SHOT_SHA}.png").write_bytes(SHOT)
    (d.home / "conversations" / fid / "runtime.lock").write_text("not exported")
    return d, client, cid, fid


async def test_export_then_import_elsewhere_keeps_history_tree_and_attachments(
    daemon_factory: Any, fake_openai: FakeProvider, tmp_path: Path
) -> None:
    d, client, cid, fid = await _source(daemon_factory, fake_openai)
    whole = await _read(client, fid)
    counts = {
        c["conversationId"]: c["messageCount"]
        for c in (await client.request("conversation/list", {}))["conversations"]
    }
    await client.close()
    bundle = tmp_path / "fork.tar"
    done = d.cli("export", fid, "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    assert "1 ancestor" in done.stdout
    with tarfile.open(bundle) as tar:
        names = tar.getnames()
    assert names[0] == "manifest.json"
    assert f"conversations/{fid}/attachments/{SHOT_SHA}.png" in names
    assert f"conversations/{cid}/metadata.jsonl" in names
    assert not any(n.endswith(".lock") for n in names)

    other: Daemon = daemon_factory(config=_config(fake_openai), name="other")
    project = tmp_path / "project-here"
    project.mkdir()
    done = other.cli("import", str(bundle), "--cwd", str(project))
    assert done.returncode == 0, done.stderr
    # Again from a script (no terminal to ask on): it says to choose, then skips when told to.
    again = other.cli("import", str(bundle))
    assert again.returncode == 1 and "--on-conflict" in again.stderr
    again = other.cli("import", str(bundle), "--on-conflict", "skip")
    assert again.returncode == 0 and "skipped" in again.stdout
    client2 = await other.client()
    try:
        assert _texts(await _read(client2, fid)) == _texts(whole)  # older history from cid
        listed: list[Any] = (await client2.request("conversation/list", {}))["conversations"]
        by_id = {c["conversationId"]: c for c in listed}
        assert set(by_id) == {cid, fid}
        assert by_id[fid]["forkedFrom"]["conversationId"] == cid  # the tree is intact
        assert by_id[fid]["cwd"] == str(project) and by_id[cid]["cwd"] == str(project)
        # Indexed behind the import's answer; a listing waits for it: counts and text are there.
        assert {c: by_id[c]["messageCount"] for c in counts} == counts
        found = await client2.request("conversation/list", {"search": "second answer"})
        assert cid in {c["conversationId"] for c in found["conversations"]}
        async with httpx.AsyncClient(base_url=f"http://{other.address}") as http:
            shot = await http.get(
                f"/attachments/{fid}/{SHOT_SHA}", headers={"Authorization": f"Bearer {other.token}"}
            )
        assert shot.status_code == 200 and shot.content == SHOT

        # Again: the conversations exist. Asked, keep both, or skip.
        params = {"path": str(bundle), "cwd": str(project)}
        with pytest.raises(RpcError) as asked:
            await client2.request("conversation/import", params)
        assert asked.value.kind == "import_conflict"
        assert sorted(error_data(asked.value)["conversations"]) == sorted([cid, fid])
        skipped = await client2.request("conversation/import", {**params, "onConflict": "skip"})
        assert skipped["conversationId"] is None and sorted(skipped["skipped"]) == sorted(
            [cid, fid]
        )
        both = await client2.request("conversation/import", {**params, "onConflict": "keep-both"})
        new_fid, new_cid = both["renamed"][fid], both["renamed"][cid]
        assert both["conversationId"] == new_fid
        assert _texts(await _read(client2, new_fid)) == _texts(whole)
        listed = (await client2.request("conversation/list", {}))["conversations"]
        forked_from: dict[str, Any] = {c["conversationId"]: c["forkedFrom"] for c in listed}
        assert forked_from[new_fid]["conversationId"] == new_cid  # the copy's own tree
        assert len(listed) == 4
    finally:
        await client2.close()


async def test_web_download_and_upload(
    daemon_factory: Any, fake_openai: FakeProvider, tmp_path: Path
) -> None:
    d, client, _cid, fid = await _source(daemon_factory, fake_openai)
    await client.close()
    headers = {"Authorization": f"Bearer {d.token}"}
    async with httpx.AsyncClient(base_url=f"http://{d.address}") as http:
        got = await http.get(f"/api/conversations/{fid}/export", headers=headers)
        assert got.status_code == 200 and got.headers["content-type"] == "application/x-tar"
        assert (await http.get(f"/api/conversations/{fid}/export")).status_code == 401
    other: Daemon = daemon_factory(config=_config(fake_openai), name="other")
    async with httpx.AsyncClient(base_url=f"http://{other.address}") as http:
        headers = {"Authorization": f"Bearer {other.token}"}
        url = "/api/import?" + urlencode({"cwd": str(other.workdir)})
        sent = await http.post(url, content=got.content, headers=headers)
        assert sent.status_code == 200, sent.text
        assert sent.json()["conversationId"] == fid
        again = await http.post(url, content=got.content, headers=headers)
        assert (
            again.status_code == 409 and again.json()["error"]["data"]["kind"] == "import_conflict"
        )
        bad = await http.post(url, content=b"garbage" * 100, headers=headers)
        assert bad.status_code == 400 and "bundle_invalid" in bad.text


def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def _file(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _manifest(cid: str, version: int = 1) -> tuple[tarfile.TarInfo, bytes]:
    manifest = {
        "format": "openvaala-bundle",
        "version": version,
        "conversationId": cid,
        "exportedAt": "2026-12-03T00:00:00Z",
        "conversations": [{"conversationId": cid, "title": "t", "role": "exported", "files": []}],
    }
    return _file("manifest.json", orjson.dumps(manifest))


async def test_hostile_bundles_are_refused_with_nothing_written(
    daemon_factory: Any, fake_openai: FakeProvider, tmp_path: Path
) -> None:
    d, client, cid, fid = await _source(daemon_factory, fake_openai)
    real = tmp_path / "real.tar"
    await client.request("conversation/export", {"conversationId": fid, "path": str(real)})
    await client.request("conversation/delete", {"conversationId": fid})
    data = real.read_bytes()
    victim = cid[:-1] + ("0" if cid[-1] != "0" else "1")

    link = tarfile.TarInfo(f"conversations/{victim}/metadata.jsonl")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    hard = tarfile.TarInfo(f"conversations/{victim}/metadata.jsonl")
    hard.type, hard.linkname = tarfile.LNKTYPE, "manifest.json"
    dev = tarfile.TarInfo(f"conversations/{victim}/metadata.jsonl")
    dev.type = tarfile.CHRTYPE
    huge = tarfile.TarInfo(f"conversations/{victim}/metadata.jsonl")
    huge.size = 50 * 1024**3
    head, manifest = _manifest(victim)  # then a header claiming 50 GB, and no such data
    padding = b"\0" * (-len(manifest) % 512)
    huge_bytes = (
        head.tobuf(tarfile.PAX_FORMAT) + manifest + padding + huge.tobuf(tarfile.PAX_FORMAT)
    )
    damaged = bytearray(data)
    damaged[data.index(b"second answer")] ^= 0x20  # one letter of a journal: its checksum
    hostile = {
        "garbage": b"this is not a tar archive at all" * 50,
        "empty": b"",
        "traversal": _tar([_manifest(victim), _file(f"conversations/{victim}/../../evil", b"x")]),
        "absolute": _tar([_manifest(victim), _file(str(tmp_path / "evil"), b"x")]),
        "outside": _tar([_manifest(victim), _file("evil.txt", b"x")]),
        "symlink": _tar([_manifest(victim), (link, None)]),
        "hardlink": _tar([_manifest(victim), (hard, None)]),
        "device": _tar([_manifest(victim), (dev, None)]),
        "huge": huge_bytes,
        "newer": _tar([_manifest(victim, version=99)]),
        "no manifest": _tar([_file(f"conversations/{victim}/metadata.jsonl", b"{}\n")]),
        "unlisted": _tar([_manifest(victim), _file(f"conversations/{victim}/x.jsonl", b"{}\n")]),
        "damaged": bytes(damaged),
        "truncated": data[: len(data) // 2],
    }
    reasons = {
        "garbage": "not a tar archive",
        "empty": "not a tar archive",
        "traversal": "unsafe path",
        "absolute": "outside conversations/",
        "outside": "outside conversations/",
        "symlink": "is a symlink",
        "hardlink": "is a hard link",
        "device": "is a device",
        "huge": "over the limit",
        "newer": "made by a newer OpenVaala",
        "no manifest": "not manifest.json",
        "unlisted": "not in the manifest",
        "damaged": "checksum differs",
        "truncated": "truncated",
    }
    before = _listing(d)
    try:
        for name, payload in hostile.items():
            path = tmp_path / f"{name.replace(' ', '-')}.tar"
            path.write_bytes(payload)
            with pytest.raises(RpcError) as refused:
                await client.request(
                    "conversation/import",
                    {"path": str(path), "cwd": str(d.workdir), "onConflict": "keep-both"},
                )
            assert refused.value.kind == "bundle_invalid", (name, refused.value)
            assert _listing(d) == before, name
            assert not [p for p in d.home.iterdir() if p.name.startswith("import-")], name
            assert reasons[name] in refused.value.message, (name, refused.value.message)
        assert not (tmp_path / "evil").exists()
        assert not (d.home / "evil").exists()
        # The real bundle still imports: the refusals left nothing in the way.
        done = await client.request(
            "conversation/import", {"path": str(real), "cwd": str(d.workdir), "onConflict": "skip"}
        )
        assert done["conversationId"] == fid and done["skipped"] == [cid]
    finally:
        await client.close()
