"""Which local user owns the other end of a loopback TCP connection (docs/security.md, "The
browser").

On Linux every TCP socket of the machine's network namespace is listed in `/proc/net/tcp` (and
`tcp6`) with the uid that owns it, readable by everyone. The connection a request came in on is
the entry whose local address is the request's client address and whose remote address is the
daemon's own: its uid is the user whose process (a browser, a script) made the request. Like
identd, this only works for connections on this machine, which is all the daemon accepts.
"""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Iterable
from pathlib import Path

Address = tuple[str, int]
TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
ESTABLISHED = "01"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _ip(value: str | bytes) -> IPAddress:
    """An address, an IPv4 one written as IPv6 (`::ffff:127.0.0.1`) as IPv4."""
    address = ipaddress.ip_address(value)
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped if mapped is not None else address


def _decode(field: str) -> tuple[IPAddress, int]:
    """`0100007F:1F90` as the kernel prints it: the address in 32-bit words of host byte order,
    then the port."""
    hex_address, _, hex_port = field.partition(":")
    words = [hex_address[i : i + 8] for i in range(0, len(hex_address), 8)]
    raw = b"".join(int(word, 16).to_bytes(4, sys.byteorder) for word in words)
    return _ip(raw), int(hex_port, 16)


def socket_owner(lines: Iterable[str], local: Address, remote: Address) -> int | None:
    """The uid of the established socket `local` → `remote` in a /proc/net/tcp listing."""
    want_local = (_ip(local[0]), local[1])
    want_remote = (_ip(remote[0]), remote[1])
    for line in lines:
        fields = line.split()
        if len(fields) < 8 or fields[3] != ESTABLISHED:
            continue  # the header, or a socket not connected
        try:
            if _decode(fields[1]) == want_local and _decode(fields[2]) == want_remote:
                return int(fields[7])
        except ValueError:
            continue
    return None


def peer_uid(client: Address | None, server: Address | None) -> int | None:
    """The uid of the process at the other end of the connection `client` → `server`, or None
    when it cannot be told (no /proc, not a TCP connection of this machine)."""
    if client is None or server is None:
        return None
    for table in TABLES:
        try:
            lines = table.read_text().splitlines()
        except OSError:
            continue
        try:
            owner = socket_owner(lines, (client[0], int(client[1])), (server[0], int(server[1])))
        except ValueError:  # an address that is not an IP address (a Unix socket's)
            return None
        if owner is not None:
            return owner
    return None
