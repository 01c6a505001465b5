"""The request heads a bridge and the web proxy forward (remote/head.py), in process."""

from __future__ import annotations

import pytest

from openvaala_server.remote import head


def test_the_bridge_names_the_daemon_and_adds_the_token_in_place_of_the_clients() -> None:
    sent = (
        b"GET /ws HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer forged\r\n"
        b"Upgrade: websocket\r\n\r\n"
    )
    found = head.split(sent + b"frame")
    assert found is not None and found[1] == b"frame"
    out = head.rewrite(found[0], "127.0.0.1:4000", "secret")
    assert out == (
        b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:4000\r\nAuthorization: Bearer secret\r\n"
        b"Upgrade: websocket\r\n\r\n"
    )


def test_what_is_not_an_http_request_is_refused() -> None:
    assert head.split(b"GET / HTTP/1.1\r\nHost: x\r\n") is None  # not complete yet
    with pytest.raises(head.BadHead, match="not an HTTP request"):
        head.rewrite(b"SSH-2.0-OpenSSH\r\n\r\n", "127.0.0.1:1", "t")
    with pytest.raises(head.BadHead, match="64 KiB"):
        head.split(b"x" * (head.LIMIT + 1))


def test_the_browser_proxy_rewrites_host_and_its_own_origin_only() -> None:
    ours = head.for_browser(
        b"POST /api/import HTTP/1.1\r\nHost: 127.0.0.1:5555\r\nOrigin: http://127.0.0.1:5555\r\n"
        b"Content-Length: 12\r\n\r\n",
        "127.0.0.1:4000",
        "127.0.0.1:5555",
    )
    assert b"Host: 127.0.0.1:4000\r\n" in ours.head
    assert b"Origin: http://127.0.0.1:4000\r\n" in ours.head
    assert ours.length == 12 and not ours.upgrade
    # Another site's origin stays what it is: the daemon refuses it.
    theirs = head.for_browser(
        b"GET /s/x/ws HTTP/1.1\r\nHost: 127.0.0.1:5555\r\nOrigin: http://evil.test\r\n"
        b"Upgrade: websocket\r\n\r\n",
        "127.0.0.1:4000",
        "127.0.0.1:5555",
    )
    assert b"Origin: http://evil.test\r\n" in theirs.head and theirs.upgrade
    with pytest.raises(head.BadHead, match="chunked"):
        head.for_browser(
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1:2\r\nTransfer-Encoding: chunked\r\n\r\n",
            "127.0.0.1:1",
            "127.0.0.1:2",
        )
