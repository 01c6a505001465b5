"""The VS Code extension in a real VS Code: code-server (VS Code's own workbench served to a
browser) with editors/vscode installed, driven from headless Chromium (Playwright) against the
real daemon. A transcript opened from the palette becomes Markdown (VS Code closes and reopens
the document to change its language) and stays live: two prompts sent from the palette both show.
Those opened by Fork, Rewind (its message back in an input box) and Follow are Markdown too.

Neither Debian nor npm has a VS Code or VSCodium that runs here (`@vscode/test-electron` downloads
one); code-server does, from npm, installed by tests/lsp/install_code_server.sh. The test runs
when code-server is found ($OPENVAALA_CODE_SERVER or on the PATH); without it,
tests/lsp/test_vscode_reopen.py (VS Code's messages replayed) and test_vscode_extension.py (the
extension against a stand-in `vscode` module) stand in."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Page, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeout

from tests.lsp.vscode_npm import link_node_modules, vscode_node_modules
from tests.support.daemon import Daemon, stop_any_server

__all__ = ["vscode_node_modules"]  # the fixture

ROOT = Path(__file__).resolve().parents[2]
CODE_SERVER = os.environ.get("OPENVAALA_CODE_SERVER") or shutil.which("code-server")
CHROMIUM = os.environ.get("OPENVAALA_CHROMIUM", "/usr/bin/chromium")
NPM = shutil.which("npm")
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(
    CODE_SERVER is None or NPM is None or not Path(CHROMIUM).exists(),
    reason="code-server (tests/lsp/install_code_server.sh), npm or Debian's chromium is missing",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def extensions(tmp_path: Path, vscode_node_modules: Path) -> Path:
    """editors/vscode installed as VS Code installs a folder extension: <publisher>.<name>-<ver>
    in the extensions directory, with its one dependency (linked from the packages installed
    once, tests/lsp/vscode_npm.py)."""
    assert NODE is not None
    # The chat panel's copy of the web UI's modules, as `npm run web` makes it before packaging.
    subprocess.run(
        [NODE, "scripts/copy-web.js"], cwd=ROOT / "editors" / "vscode", check=True, timeout=60
    )
    manifest = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    folder = tmp_path / "extensions" / f"openvaala.openvaala-{manifest['version']}"
    shutil.copytree(
        ROOT / "editors" / "vscode", folder, ignore=shutil.ignore_patterns("node_modules", "dist")
    )
    link_node_modules(folder, vscode_node_modules)
    return folder.parent


@pytest.fixture
def code_server(daemon: Daemon, extensions: Path, tmp_path: Path) -> Iterator[str]:
    assert CODE_SERVER is not None
    user = tmp_path / "vscode-user"
    (user / "User").mkdir(parents=True)
    settings = {
        "openvaala.command": [sys.executable, "-m", "openvaala_server", "lsp"],
        "workbench.startupEditor": "none",
        "security.workspace.trust.enabled": False,
        "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": False,
    }
    (user / "User" / "settings.json").write_text(json.dumps(settings))
    port = _free_port()
    env = {**daemon.env, "PYTHONPATH": str(ROOT)}
    log = open(tmp_path / "code-server.log", "wb")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(
        [
            CODE_SERVER,
            "--auth=none",
            f"--config={tmp_path / 'code-server.yaml'}",
            f"--bind-addr=127.0.0.1:{port}",
            "--disable-telemetry",
            "--disable-update-check",
            "--disable-workspace-trust",
            f"--extensions-dir={extensions}",
            f"--user-data-dir={user}",
            str(daemon.workdir),
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        # Its own process group: the extension host and the editor bridge it started are
        # stopped with it, before the daemon fixture's teardown (a bridge outliving code-server
        # would restart the daemon the fixture just stopped, and leave it running).
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None, (tmp_path / "code-server.log").read_text()
            subprocess.run(["sleep", "0.1"], check=True)
        yield f"{url}/?folder={daemon.workdir}"
    finally:
        _stop_group(process)
        stop_any_server(daemon)
        log.close()


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    # The group's other members (extension host, bridge) may outlive its leader briefly.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


@contextlib.asynccontextmanager
async def workbench(url: str, screenshot: Path) -> AsyncIterator[Page]:
    """Headless Chromium on code-server's workbench, once it shows; if the test fails, a
    screenshot of it is kept at `screenshot`."""
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--headless", "--disable-gpu"]
        )
        page = await browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(60_000)
        try:
            await page.goto(url)
            await page.locator(".monaco-workbench").wait_for()
            yield page
        except BaseException:
            await page.screenshot(path=str(screenshot))
            raise
        finally:
            await browser.close()


async def _palette(page: Page, command: str) -> None:
    """Run a command from the palette. The palette lists the commands known when it opens, and
    the extension host registers ours a few seconds after the workbench shows: ask again."""
    box = page.locator(".quick-input-widget input")
    row = page.locator(".quick-input-list .monaco-list-row", has_text=command).first
    for _ in range(30):
        await page.keyboard.press("F1")
        await box.wait_for(state="visible")
        await box.fill(">" + command)
        try:
            await row.wait_for(state="visible", timeout=2000)
        except PlaywrightTimeout:
            await box.press("Escape")
            continue
        await box.press("Enter")
        return
    raise AssertionError(f"the palette has no {command!r}")


async def _pick(page: Page, label: str, index: int = 0) -> None:
    row = page.locator(".quick-input-list .monaco-list-row", has_text=label).nth(index)
    await row.click()


async def _active_tab(page: Page) -> str:
    return (await page.locator(".tabs-container .tab.active").first.inner_text()).strip()


async def _new_tab(page: Page, seen: set[str]) -> str:
    """The label of the editor that becomes active, once it is not one of `seen`."""
    for _ in range(600):
        label = await _active_tab(page)
        if label not in seen:
            return label
        await asyncio.sleep(0.1)
    raise AssertionError(f"no new editor opened; still {label!r}")


async def _editor_text(page: Page) -> str:
    text = await page.locator(".editor-instance .view-lines").first.text_content() or ""
    return text.replace("\u00a0", " ")


async def _until_shown(page: Page, words: str, timeout: float = 60) -> None:
    for _ in range(int(timeout * 10)):
        if words in await _editor_text(page):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{words!r} not shown; the editor shows: {await _editor_text(page)!r}")


@pytest.mark.timeout(300)  # npm install, code-server and Chromium on a loaded machine
async def test_the_extension_in_vscode_keeps_a_markdown_transcript_live(
    code_server: str, tmp_path: Path, daemon: Daemon
) -> None:
    async with workbench(code_server, tmp_path / "vscode.png") as page:
        await _palette(page, "OpenVaala: New Conversation")
        await _until_shown(page, "> agent **default** · model `demo`")
        # VS Code set the language: the status bar's language picker says Markdown.
        language = page.locator("#status\\.editor\\.mode")
        await language.filter(has_text="Markdown").wait_for()
        for words in ("first from vscode", "second from vscode"):
            await _palette(page, "OpenVaala: Send Message (queue)")
            box = page.locator(".quick-input-widget input")
            await box.wait_for(state="visible")
            await box.fill(words)
            await box.press("Enter")
            # The reply too: the document is refreshed while the turn runs and after it.
            await _until_shown(page, f"You said: “{words}”")
        # Transcripts the bridge opens (fork, rewind) and the extension opens (follow) are
        # Markdown too.
        seen = {await _active_tab(page)}
        await _palette(page, "OpenVaala: Fork")
        seen.add(await _new_tab(page, seen))
        await _until_shown(page, "You said: “second from vscode”")
        await language.filter(has_text="Markdown").wait_for()
        await _palette(page, "OpenVaala: Rewind")
        await _pick(page, "second from vscode")
        box = page.locator(".quick-input-widget input")
        await box.wait_for(state="visible")
        assert await box.input_value() == "second from vscode"  # back for editing
        await box.press("Escape")
        seen.add(await _new_tab(page, seen))
        await _until_shown(page, "You said: “first from vscode”")
        assert "second from vscode" not in await _editor_text(page)
        await language.filter(has_text="Markdown").wait_for()
        await _palette(page, "OpenVaala: Send Message (queue)")
        await box.wait_for(state="visible")
        await box.fill("spawn: count to three")
        await box.press("Enter")
        await _until_shown(page, "I started a subagent")
        await _palette(page, "OpenVaala: Follow")
        await _pick(page, "default", index=1)  # the subagent, under the root agent
        await _new_tab(page, seen)
        await _until_shown(page, "## Task from default (parent agent)")
        await language.filter(has_text="Markdown").wait_for()

        # The permission mode from the palette (the conversation on screen, the subagent's
        # transcript being one of it): the allowed modes, the one in force marked.
        await _palette(page, "OpenVaala: Set Permission Mode")
        current = page.locator(".quick-input-list .monaco-list-row", has_text="current")
        await current.filter(has_text="Auto-edit").wait_for()
        await _pick(page, "Plan (read-only)")
        toast = page.locator(".notifications-toasts", has_text="permission mode Plan (read-only)")
        await toast.wait_for()
        async with await daemon.client() as client:
            listed = await client.request("conversation/list", {})
            modes = []
            for row in listed["conversations"]:
                read = await client.request(
                    "conversation/subscribe", {"conversationId": row["conversationId"]}
                )
                assert read["snapshot"] is not None
                modes.append(read["snapshot"]["conversation"]["permissionMode"])
        assert sorted(modes).count("plan") == 1, modes
