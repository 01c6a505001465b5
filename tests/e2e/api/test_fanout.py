"""Every client sees the same events; a dropped client resumes without gaps or duplicates;
a client that stops reading is dropped without slowing the others."""

from __future__ import annotations

import asyncio
import socket
import time

from websockets.client import ClientProtocol
from websockets.uri import parse_uri

from tests.support.daemon import Daemon
from tests.support.events import (
    Note,
    collect_until,
    completed_items,
    new_conversation,
    turn_ended,
)

SLOW_DEMO = '[models.demo]\nprovider = "demo"\npace_ms = 15\n'


def after(seq: int, notes: list[Note]) -> list[Note]:
    """The events a client subscribed at `seq` sees: the first subscriber also saw what the
    daemon published before (a usage estimate counted again off the loop, for one)."""
    return [n for n in notes if n["params"].get("seq", seq + 1) > seq]


async def test_two_clients_see_identical_event_sequences(daemon: Daemon) -> None:
    a = await daemon.client("a")
    b = await daemon.client("b")
    cid = await new_conversation(a, str(daemon.workdir))
    since = (await b.subscribe(cid))["seq"]
    await b.request(
        "input/send", {"conversationId": cid, "text": "run: echo one; echo two", "mode": "queue"}
    )
    seen_a = after(since, await collect_until(a, turn_ended()))
    seen_b = await collect_until(b, turn_ended())
    assert seen_a == seen_b
    # B's message appeared live on A, and the tool output streamed to both.
    assert completed_items(seen_a, "user_message")[0]["text"] == "run: echo one; echo two"
    assert "two" in completed_items(seen_a, "tool_result")[0]["output"]
    seqs = [n["params"]["seq"] for n in seen_a]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    await a.close()
    await b.close()


async def test_resubscribe_after_seq_gets_exactly_the_missed_events(daemon_factory: object) -> None:
    d: Daemon = daemon_factory(config=SLOW_DEMO)  # type: ignore[operator]
    watcher = await d.client("watcher")
    flaky = await d.client("flaky", reconnect=False)
    cid = await new_conversation(watcher, str(d.workdir))
    since = (await flaky.subscribe(cid))["seq"]
    await watcher.request(
        "input/send", {"conversationId": cid, "text": "tell me a long story " * 5, "mode": "queue"}
    )
    first = await collect_until(flaky, lambda n: n["method"] == "item/delta")
    last_seq = first[-1]["params"]["seq"]
    await flaky.close()  # dropped mid-turn
    # The turn streams on without it: the watcher sees an event the dropped client missed.
    seen = await collect_until(watcher, lambda n: n["params"].get("seq", -1) > last_seq)
    back = await d.client("flaky-again")
    result = await back.subscribe(cid, after_seq=last_seq)
    assert result["snapshot"] is None and result["replayed"] > 0
    rest = await collect_until(back, turn_ended())
    if not turn_ended()(seen[-1]):
        seen += await collect_until(watcher, turn_ended())
    everything = after(since, seen)
    assert first + rest == everything
    await watcher.close()
    await back.close()


async def test_the_client_reconnects_by_itself_without_gaps(daemon_factory: object) -> None:
    d: Daemon = daemon_factory(config=SLOW_DEMO)  # type: ignore[operator]
    watcher = await d.client("watcher")
    client = await d.client("auto")
    cid = await new_conversation(watcher, str(d.workdir))
    since = (await client.subscribe(cid))["seq"]
    await watcher.request(
        "input/send", {"conversationId": cid, "text": "words " * 30, "mode": "queue"}
    )
    first = await collect_until(client, lambda n: n["method"] == "item/delta")
    assert client._ws is not None
    await client._ws.close()  # the network drops the connection
    rest = await collect_until(client, turn_ended())
    everything = after(since, await collect_until(watcher, turn_ended()))
    without_status = [n for n in first + rest if n["method"] != "client/connection"]
    assert without_status == everything
    assert any(n["method"] == "client/connection" for n in rest)
    await watcher.close()
    await client.close()


async def test_a_client_that_stops_reading_is_dropped(daemon_factory: object) -> None:
    config = (
        '[models.demo]\nprovider = "demo"\npace_ms = 0\n'
        "[server]\nclient_queue_limit = 20\ntool_output_limit = 5000000\n"
    )
    d: Daemon = daemon_factory(config=config)  # type: ignore[operator]
    good = await d.client("good")
    cid = await new_conversation(good, str(d.workdir))
    # A client that subscribes and then never reads again: websockets' sans-I/O protocol over a
    # plain socket with a tiny receive buffer, so the server's sends back up at once.
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", d.port))
    proto = ClientProtocol(parse_uri(f"ws://{d.address}/ws"))
    handshake = proto.connect()
    handshake.headers["Authorization"] = f"Bearer {d.token}"
    proto.send_request(handshake)
    sock.sendall(b"".join(proto.data_to_send()))
    proto.receive_data(sock.recv(65536))
    for frame in (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
        '{"jsonrpc":"2.0","id":2,"method":"conversation/subscribe",'
        f'"params":{{"conversationId":"{cid}"}}}}',
    ):
        proto.send_text(frame.encode())
    sock.sendall(b"".join(proto.data_to_send()))
    command = "run: for i in $(seq 1 30); do head -c 300000 /dev/zero | tr '\\\\0' x; echo; done"
    await good.request("input/send", {"conversationId": cid, "text": command, "mode": "queue"})
    notes = await collect_until(good, turn_ended(), timeout=30)
    assert notes[-1]["params"]["status"] == "completed"
    output = completed_items(notes, "tool_result")[0]["output"]
    assert "exit code: 0" in output or "truncated" in output
    # The stuck client was cut off rather than allowed to hold the turn back: reading what
    # reached it ends in a closed connection.
    sock.setblocking(False)
    closed = False
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not closed:
        try:
            data = sock.recv(1 << 20)
        except BlockingIOError:
            await asyncio.sleep(0.05)
            continue
        except ConnectionError:
            closed = True
            break
        if not data:
            closed = True
    sock.close()
    assert closed
    assert "dropping a client that stopped reading" in d.log()
    await good.close()
