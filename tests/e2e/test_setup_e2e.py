"""`openvaala setup` end to end against a fake OpenAI-compatible server: with flags (as a script
runs it) and at a terminal (pexpect). The config it writes loads, its key file is the owner's
alone and never echoed, and a turn completes through the real daemon on it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest

from openvaala_server.config import load_config
from tests.fakes import local_servers as shapes
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.fakes.wire import ANTHROPIC
from tests.support.daemon import Daemon
from tests.support.events import completed_items, new_conversation, run_turn

KEY = "sk-setup-secret-0123456789"
# The key prompt itself, not just "API key": a refusal says "Incorrect API key provided", and a key
# sent on that line, before getpass turns echo off, is shown and then dropped by its flush.
KEY_PROMPT = r"API key \(not shown"


@pytest.fixture(name="server")  # shared by the other test_setup_* files, which import it
def fake_server() -> Iterator[FakeProvider]:
    with FakeProvider(api_key=KEY) as fake:
        fake.json_routes[("GET", "/v1/models")] = shapes.openai_models("other-model", "fake-model")
        fake.json_routes[("GET", "/props")] = shapes.llamacpp_props(16_384)
        yield fake


def env_for(config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["OPENVAALA_CONFIG"] = str(config)
    return env


def setup(
    config: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "openvaala_server", "setup", *args],
        input=stdin,
        env={**env_for(config), **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def flags(fake: FakeProvider, *extra: str) -> list[str]:
    return ["--provider", "compatible", "--base-url", fake.base_url(), *extra]


def assert_key_kept_safely(config: Path, name: str, *outputs: str) -> None:
    key_file = config.parent / "keys" / f"{name}.key"
    assert key_file.read_text().strip() == KEY
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert KEY not in config.read_text()
    for output in outputs:
        assert KEY not in output


async def test_setup_with_flags_writes_a_config_a_turn_completes_on(
    server: FakeProvider, tmp_path: Path, daemon_factory: Callable[..., Daemon]
) -> None:
    config = tmp_path / "home-config.toml"  # where daemon_factory keeps its config
    server.enqueue(Reply().text("ready"))
    done = setup(config, *flags(server, "--model", "fake-model", "--api-key-stdin"), stdin=KEY)
    assert done.returncode == 0, done.stderr
    assert "The model answered: 'ready'" in done.stdout
    assert "16384 tokens (server: llama.cpp /props" in done.stdout
    assert_key_kept_safely(config, "fake-model", done.stdout, done.stderr)
    test_call = server.requests[-1]
    assert test_call.wire == "openai" and test_call.json["model"] == "fake-model"

    loaded = load_config(config)
    assert loaded.agents["default"].model == "fake-model"
    assert loaded.models["fake-model"].api_key_file == str(config.parent / "keys/fake-model.key")
    assert "# context_window is asked of the server" in config.read_text()

    d = daemon_factory(config=config.read_text())
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        server.enqueue(Reply().text("hello through the daemon"))
        notes = await run_turn(client, cid, "hi")
        assert [m["text"] for m in completed_items(notes, "agent_message")] == [
            "hello through the daemon"
        ]
        assert server.last_request.headers["authorization"] == f"Bearer {KEY}"

        # The key file is the daemon's secret: the agent's tools cannot read it.
        key_file = str(config.parent / "keys" / "fake-model.key")
        server.enqueue(
            Reply().tool_call("read_file", {"path": key_file}),
            Reply().text("could not read it"),
        )
        notes = await run_turn(client, cid, "read the key")
        result = completed_items(notes, "tool_result")[0]
        assert result["isError"] and "keeps private" in str(result["output"])
        assert KEY not in str(server.last_request.json)
    finally:
        await client.close()


def test_setup_at_a_terminal_asks_each_step(server: FakeProvider, tmp_path: Path) -> None:
    config = tmp_path / "openvaala" / "config.toml"
    server.enqueue(Reply().text("ready"))
    child = pexpect.spawn(
        sys.executable,
        ["-m", "openvaala_server", "setup"],
        env=env_for(config),
        timeout=30,
        encoding="utf-8",
        codec_errors="replace",
    )
    try:
        child.expect("Which provider")
        child.expect(r"Number \(1-4\): ")
        child.sendline("3")  # an OpenAI-compatible server
        child.expect("Server URL")
        child.sendline(server.base_url())
        child.expect(KEY_PROMPT)
        child.sendline(KEY)
        child.expect("Which model")
        child.expect("1. fake-model")
        child.expect(r"Number \(1-2\): ")
        child.sendline("1")
        child.expect("The model answered: 'ready'")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    assert_key_kept_safely(config, "fake-model", child.before or "")
    assert load_config(config).models["fake-model"].model == "fake-model"


def test_setup_extends_a_config_and_keeps_what_was_there(
    server: FakeProvider, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    before = '# my own file\n[agents.mine]\nmodel = "demo"\n\n[retry]\nmax_retries = 2\n'
    config.write_text(before)
    done = setup(
        config, *flags(server, "--model", "fake-model", "--api-key-stdin", "--no-test"), stdin=KEY
    )
    assert done.returncode == 0, done.stderr
    text = config.read_text()
    assert text.startswith(before.rstrip("\n"))
    loaded = load_config(config)
    assert set(loaded.agents) == {"mine"}  # agents already there: none added
    assert loaded.retry.max_retries == 2
    assert "fake-model" in loaded.models
    assert server.requests[-1].path == "/v1/models"  # --no-test: no model call
    assert "use this one with `/model fake-model`" in done.stdout


def test_a_refused_key_fails_with_the_reason_and_writes_nothing(
    server: FakeProvider, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    done = setup(config, *flags(server, "--api-key-stdin"), stdin="sk-wrong-key-9999")
    assert done.returncode == 1
    assert "401" in done.stderr
    assert "sk-wrong-key-9999" not in done.stderr
    assert not config.exists()


def test_a_missing_flag_is_named(tmp_path: Path) -> None:
    done = setup(tmp_path / "config.toml", "--provider", "compatible")
    assert done.returncode == 2
    assert "--base-url is needed" in done.stderr


def test_setup_for_anthropic_writes_a_catalog_model_without_limits(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    with FakeProvider(api_key=KEY, wire=ANTHROPIC) as fake:
        model = "claude-sonnet-4-20250514"
        fake.json_routes[("GET", "/v1/models")] = shapes.anthropic_models(model, "claude-3-5-haiku")
        fake.enqueue(Reply().text("ready"))
        done = setup(
            config,
            *("--provider", "anthropic", "--base-url", fake.url, "--model", model),
            *("--api-key-env", "MY_ANTHROPIC_KEY"),
            env={"MY_ANTHROPIC_KEY": KEY},
        )
        assert done.returncode == 0, done.stderr
        assert "The model answered: 'ready'" in done.stdout
        assert fake.requests[0].headers["x-api-key"] == KEY  # the listing checked the key
    text = config.read_text()
    assert 'api_key_env = "MY_ANTHROPIC_KEY"' in text and "context_window =" not in text
    loaded = load_config(config).models["claude-sonnet-4-20250514"]
    assert (loaded.context_window, loaded.window_source, loaded.vision) == (
        200_000,
        "catalog",
        True,
    )
    assert not (tmp_path / "keys").exists()  # a key in the environment is not copied
