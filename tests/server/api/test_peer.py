"""Telling which user owns the other end of a loopback connection (openvaala_server/api/peer.py),
from /proc/net/tcp listings as the kernel prints them, and from this machine's own."""

from __future__ import annotations

import os
import socket

from openvaala_server.api.peer import peer_uid, socket_owner

HEADER = (
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout"
)
# 127.0.0.1:40000 -> 127.0.0.1:8080 owned by uid 1001; the daemon's side (uid 0); a listener.
TCP = [
    HEADER,
    "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 0 1",
    "   1: 0100007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1001 0 2",
    "   2: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0 0 3",
]
# The same connection over IPv6 loopback (::1), and an IPv4 one written IPv4-mapped.
TCP6 = [
    HEADER,
    "   0: 00000000000000000000000001000000:9C41 00000000000000000000000001000000:1F90 01 "
    "00000000:00000000 00:00000000 00000000  1002 0 4",
    "   1: 0000000000000000FFFF00000100007F:9C42 0000000000000000FFFF00000100007F:1F90 01 "
    "00000000:00000000 00:00000000 00000000  1003 0 5",
]


def test_the_owner_is_the_uid_of_the_client_side_socket() -> None:
    assert socket_owner(TCP, ("127.0.0.1", 40000), ("127.0.0.1", 8080)) == 1001
    assert socket_owner(TCP, ("127.0.0.1", 8080), ("127.0.0.1", 40000)) == 0
    assert socket_owner(TCP, ("127.0.0.1", 40001), ("127.0.0.1", 8080)) is None
    assert socket_owner(TCP6, ("::1", 40001), ("::1", 8080)) == 1002
    assert socket_owner(TCP6, ("127.0.0.1", 40002), ("127.0.0.1", 8080)) == 1003


def test_a_real_loopback_connection_is_ours() -> None:
    with (
        socket.create_server(("127.0.0.1", 0)) as server,
        socket.create_connection(server.getsockname()),
    ):
        accepted, peer = server.accept()
        with accepted:
            assert peer_uid(peer, server.getsockname()) == os.getuid()
    assert peer_uid(("testclient", 123), ("127.0.0.1", 1)) is None
    assert peer_uid(None, None) is None
