"""`openvaala setup` at a terminal asks again for a key not typed or refused, and for a typed
address nobody answers at; with flags, each mistake names the flag that fixes it."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pexpect

from openvaala_server.config import load_config
from tests.e2e.test_setup_e2e import (
    KEY,
    KEY_PROMPT,
    env_for,
    fake_server,  # noqa: F401 (the `server` fixture)
    setup,
)
from tests.fakes.providers import FakeProvider


def closed_url() -> str:
    """An address nobody listens at: the port was free a moment ago and is not bound now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def spawn(config: Path, *args: str) -> pexpect.spawn[str]:
    return pexpect.spawn(
        sys.executable,
        ["-m", "openvaala_server", "setup", *args],
        env=env_for(config),
        timeout=30,
        encoding="utf-8",
        codec_errors="replace",
    )


def finish(child: pexpect.spawn[str]) -> None:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before


def test_a_missing_or_refused_key_is_asked_again(server: FakeProvider, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    # OpenAI (a key is required) at the fake's address, given as a flag.
    child = spawn(config, "--base-url", server.base_url(), "--model", "fake-model", "--no-test")
    try:
        child.expect(r"Number \(1-4\): ")
        child.sendline("1")
        child.expect(KEY_PROMPT)
        child.sendline("")  # no key typed
        child.expect("No key typed. The environment variable that holds it")
        child.sendline("")  # nor a variable: the key is asked again
        child.expect(KEY_PROMPT)
        child.sendline("sk-wrong-key-9999")
        child.expect("the key was refused")
        child.expect(KEY_PROMPT)
        child.sendline(KEY)
        child.expect("Wrote \\[models.fake-model\\]")
        finish(child)
    finally:
        child.close(force=True)
    assert (config.parent / "keys" / "fake-model.key").read_text().strip() == KEY


def test_a_typed_address_nobody_answers_at_is_asked_again(
    server: FakeProvider, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    child = spawn(config, "--model", "fake-model", "--no-test")
    try:
        child.expect(r"Number \(1-4\): ")
        child.sendline("3")  # an OpenAI-compatible server
        child.expect("Server URL")
        child.sendline(closed_url())
        child.expect(KEY_PROMPT)
        child.sendline(KEY)
        child.expect("connection refused")
        child.expect("check the address and type it again")
        child.expect("Server URL")
        child.sendline(server.base_url())  # the key typed before is kept
        finish(child)
    finally:
        child.close(force=True)
    assert load_config(config).models["fake-model"].base_url == server.base_url()


def test_with_flags_a_refused_connection_names_base_url(tmp_path: Path) -> None:
    done = setup(tmp_path / "config.toml", "--provider", "compatible", "--base-url", closed_url())
    assert done.returncode == 1
    assert "connection refused" in done.stderr and "check --base-url" in done.stderr


def test_with_flags_a_missing_key_names_its_flags(tmp_path: Path) -> None:
    done = setup(tmp_path / "config.toml", "--provider", "openai", "--model", "gpt-4.1")
    assert done.returncode == 2
    assert "an API key is needed: give --api-key-env VAR or --api-key-stdin" in done.stderr
    assert "((" not in done.stderr and "))" not in done.stderr
