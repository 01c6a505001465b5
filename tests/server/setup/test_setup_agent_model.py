"""`openvaala setup` on a config whose default agent names no model: that agent takes the new
model (new conversations would otherwise stay on the demo model), and setup says so. And a test
turn that fails after config.toml was written exits with its own status."""

from __future__ import annotations

from pathlib import Path

from openvaala_server.config import load_config
from openvaala_server.setup import config_text
from openvaala_server.setup.status import EXIT_TEST_FAILED
from tests.e2e.test_setup_e2e import (
    KEY,
    fake_server,  # noqa: F401 (the `server` fixture)
    flags,
    setup,
)
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply


def run_setup(server: FakeProvider, config: Path) -> str:
    done = setup(
        config, *flags(server, "--model", "fake-model", "--api-key-stdin", "--no-test"), stdin=KEY
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_default_agent_without_a_model_gets_the_new_one(
    server: FakeProvider, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    before = '[agents.default]\ninstructions = "Be terse."\n'
    config.write_text(before)
    out = run_setup(server, config)
    loaded = load_config(config)
    assert loaded.agents["default"].model == "fake-model"
    assert loaded.agents["default"].instructions == "Be terse."
    assert "[agents.default] named no model: new conversations now use fake-model" in out
    assert "keep their models" not in out


def test_the_default_agent_is_the_one_default_agent_names(
    server: FakeProvider, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'default_agent = "main"\n\n[agents.helper]\nmodel = "demo"\n\n'
        '[agents.main]  # mine\ninstructions = "Be terse."\n'
    )
    out = run_setup(server, config)
    loaded = load_config(config)
    assert loaded.agents["main"].model == "fake-model"
    assert loaded.agents["helper"].model == "demo"  # it names its model: kept
    assert "[agents.main] named no model" in out


def test_an_agent_table_setup_cannot_edit_is_reported(server: FakeProvider, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    before = 'agents = { default = { instructions = "Be terse." } }\n'
    config.write_text(before)
    out = run_setup(server, config)
    assert config.read_text().startswith(before)
    assert load_config(config).agents["default"].model == "demo"
    assert "[agents.default] names no model, so new conversations stay on the demo model" in out
    assert 'add model = "fake-model" to it' in out


def test_the_edit_keeps_every_other_byte() -> None:
    text = '# mine\n[ agents . "default" ]\ninstructions = "x"\n\n[retry]\nmax_retries = 2\n'
    edited = config_text.with_agent_model(text, "default", "m")
    assert edited == text.replace("]\n", ']\nmodel = "m"  # added by `openvaala setup`\n', 1)


def test_a_failed_test_turn_after_writing_exits_3(server: FakeProvider, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    server.enqueue(Reply.not_found())
    done = setup(config, *flags(server, "--model", "fake-model", "--api-key-stdin"), stdin=KEY)
    assert done.returncode == EXIT_TEST_FAILED, done.stderr
    assert "the configuration is written, but the test turn failed" in done.stderr
    assert "fake-model" in load_config(config).models  # written, and it loads
