"""`web_fetch`: one http(s) URL as readable text (docs/configuration.md, "web_fetch").

The daemon makes the request itself, so the agent's `network` setting is applied by the approval
policy (the call's `Access.network`: asked under `escalate`, refused under `never`), and the
daemon's own reach is limited here: never a loopback, private, link-local or otherwise non-public
address unless the user allowed that host in `[web_fetch] allow_private_hosts`. The address that
was checked is the one connected to (the host name still goes in the Host header and TLS), so a
name cannot resolve to something else between the check and the request; each redirect is
checked again. A size limit (`max_mb`) and a time limit (`timeout_s`) bound every fetch.
"""

from __future__ import annotations

import importlib
import ipaddress
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urljoin, urlsplit, urlunsplit

import anyio

from openvaala_server.config import WebFetchConfig
from openvaala_server.domain import tool_names
from openvaala_server.domain.permissions import Access
from openvaala_server.models.base import ToolSpec
from openvaala_server.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    import httpx

MIB: Final = 1024 * 1024
# The most HTML converted to Markdown; past it the page is cut (and says so).
HTML_MAX_CHARS: Final = 500_000
MAX_REDIRECTS: Final = 5
USER_AGENT: Final = "OpenVaala-web_fetch/1"

_SPEC = ToolSpec(
    name=tool_names.WEB_FETCH,
    description=(
        "Fetch one http(s) URL and return it as readable text (HTML as Markdown). "
        "Loopback and private addresses are refused unless the user allowed the host."
    ),
    parameters={
        "type": "object",
        "properties": {"url": {"type": "string", "description": "An http:// or https:// URL."}},
        "required": ["url"],
        "additionalProperties": False,
    },
)


class FetchRefused(Exception):
    """The fetch may not or cannot go on; the message is what the model reads."""


@dataclass(frozen=True)
class _Target:
    url: str  # as the model gave it (or a redirect led to)
    host: str
    port: int
    scheme: str


def _target(url: str) -> _Target:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise FetchRefused(f"web_fetch reads http:// and https:// URLs only, not {url!r}")
    if not parts.hostname:
        raise FetchRefused(f"{url!r} names no host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise FetchRefused(f"{url!r} has an invalid port") from None
    return _Target(url, parts.hostname.lower(), port, parts.scheme)


def _allowed(target: _Target, allowed: tuple[str, ...]) -> bool:
    return target.host in allowed or f"{target.host}:{target.port}" in allowed


async def _checked_address(target: _Target, cfg: WebFetchConfig) -> str:
    """The address to connect to: the host's first, once every one of them is public (or the
    user allowed the host)."""
    try:
        infos = await anyio.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise FetchRefused(f"cannot resolve {target.host}: {exc}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise FetchRefused(f"cannot resolve {target.host}")
    if not _allowed(target, cfg.allow_private_hosts):
        for address in addresses:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
            if not ip.is_global:
                raise FetchRefused(
                    f"web_fetch does not reach loopback or private addresses: {target.host} "
                    f"is {address}. The user can allow this host in [web_fetch] "
                    "allow_private_hosts."
                )
    return addresses[0]


def _pinned(target: _Target, address: str) -> str:
    """The URL with its host replaced by the checked address."""
    parts = urlsplit(target.url)
    host = f"[{address}]" if ":" in address else address
    return urlunsplit((parts.scheme, f"{host}:{target.port}", parts.path or "/", parts.query, ""))


@dataclass(frozen=True)
class Page:
    url: str
    content_type: str
    text: str
    cut: bool  # stopped reading at max_mb
    # Only the first HTML_MAX_CHARS of the page were made text.
    html_cut: bool = False


async def fetch(url: str, cfg: WebFetchConfig) -> Page:
    import httpx  # loaded by `run`, in a worker thread

    # No proxies from the environment: the address checked must be the one reached.
    async with httpx.AsyncClient(trust_env=False, follow_redirects=False) as client:
        target = _target(url)
        for _ in range(MAX_REDIRECTS + 1):
            address = await _checked_address(target, cfg)
            default_port = target.port == (443 if target.scheme == "https" else 80)
            host_header = target.host if default_port else f"{target.host}:{target.port}"
            request = client.build_request(
                "GET",
                _pinned(target, address),
                headers={"Host": host_header, "User-Agent": USER_AGENT, "Accept": "*/*"},
                extensions={"sni_hostname": target.host},
            )
            response = await client.send(request, stream=True)
            try:
                location = response.headers.get("location")
                if response.is_redirect and location:
                    target = _target(urljoin(target.url, location))
                    continue
                return await _read(target.url, response, cfg)
            finally:
                await response.aclose()
    raise FetchRefused(f"more than {MAX_REDIRECTS} redirects from {url}")


async def _read(url: str, response: httpx.Response, cfg: WebFetchConfig) -> Page:
    # Imported at the first fetch: BeautifulSoup is not needed to start the daemon.
    from openvaala_server.tools.web_text import html_to_markdown, is_html, is_text

    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if response.status_code >= 400:
        raise FetchRefused(f"{url} answered {response.status_code} {response.reason_phrase}")
    if not is_text(content_type):
        raise FetchRefused(f"{url} is {content_type}, not text: web_fetch reads text and HTML")
    limit = cfg.max_mb * MIB
    body = bytearray()
    cut = False
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            del body[limit:]
            cut = True
            break
    text = bytes(body).decode(response.charset_encoding or "utf-8", errors="replace")
    if is_html(content_type):
        # Converting HTML is pure Python and slow (a 4.5 MB page took a minute): at most
        # HTML_MAX_CHARS of it, in a worker thread, so no other conversation waits for it.
        html_cut = len(text) > HTML_MAX_CHARS
        text = await anyio.to_thread.run_sync(html_to_markdown, text[:HTML_MAX_CHARS])
        return Page(url, content_type, text, cut, html_cut)
    return Page(url, content_type, text, cut)


class WebFetchTool:
    def __init__(self, config: WebFetchConfig) -> None:
        self.config = config

    @property
    def spec(self) -> ToolSpec:
        return _SPEC

    def access(self, arguments: dict[str, Any], cwd: Path) -> Access:
        url = str(arguments.get("url") or "")
        host = urlsplit(url).hostname or url
        return Access(summary=f"fetch {url}", network=host)

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        url = arguments.get("url")
        if not isinstance(url, str) or not url:
            return ToolResult("`url` must be a non-empty string", is_error=True)
        timeout = self.config.timeout_s
        # Imported by the first fetch, in a worker thread: not at the daemon's start, and not on
        # the event loop (docs/design.md, "Start-up imports").
        await anyio.to_thread.run_sync(importlib.import_module, "httpx")
        import httpx

        try:
            with anyio.fail_after(timeout):
                page = await fetch(url, self.config)
        except FetchRefused as exc:
            return ToolResult(str(exc), is_error=True)
        except TimeoutError:
            return ToolResult(
                f"{url} did not answer within [web_fetch] timeout_s = {timeout:g} s", True
            )
        except httpx.HTTPError as exc:
            return ToolResult(f"cannot fetch {url}: {type(exc).__name__}: {exc}", is_error=True)
        text = page.text
        if page.cut:
            text += f"\n\n[… stopped reading at [web_fetch] max_mb = {self.config.max_mb} MiB …]"
        elif page.html_cut:
            text += f"\n\n[… only the first {HTML_MAX_CHARS:,} characters of the HTML were read …]"
        return ToolResult(text)
