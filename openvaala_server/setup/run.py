"""The steps of `openvaala setup`, in order: provider, address, key, models, config, test turn.

Every answer comes from a flag or, at a terminal, from a question (prompts.py). The key is never
taken from the command line: it is read from an environment variable (`--api-key-env`), from
stdin (`--api-key-stdin`) or typed unseen, and then stored in a 0600 file (keys.py).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import httpx

from openvaala_server.config import WINDOW_PENDING, ConfigError, ModelConfig, load_config
from openvaala_server.domain import catalog
from openvaala_server.models.probe import PROBE_TIMEOUT, probe, with_window
from openvaala_server.setup import config_text
from openvaala_server.setup.endpoint import (
    Failure,
    KeyRefused,
    Unreachable,
    list_models,
    test_turn,
)
from openvaala_server.setup.keys import store_key
from openvaala_server.setup.presets import BY_KEY, PRESETS, Preset
from openvaala_server.setup.prompts import Prompter, Usage
from openvaala_server.setup.status import EXIT_FAILED, EXIT_OK, EXIT_TEST_FAILED, EXIT_USAGE


@dataclass(frozen=True)
class Flags:
    provider: str | None = None
    base_url: str | None = None
    model: str | None = None
    name: str | None = None
    api_key_env: str | None = None
    api_key_stdin: bool = False
    context_window: int | None = None
    test: bool = True


@dataclass
class Key:
    env: str | None = None  # the variable it is read from
    secret: str | None = None  # the key itself, to store in a file (typed or from stdin)

    @property
    def value(self) -> str | None:
        return self.secret or (os.environ.get(self.env, "").strip() if self.env else None)


def say(text: str) -> None:
    print(text, flush=True)


def run(flags: Flags, prompter: Prompter, config_file: Path) -> int:
    try:
        return _run(flags, prompter, config_file)
    except Usage as exc:
        print(f"openvaala setup: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Failure as exc:
        print(f"openvaala setup: {exc.message}", file=sys.stderr)
        return EXIT_FAILED


def _run(flags: Flags, prompter: Prompter, config_file: Path) -> int:
    text = _read(config_file)
    taken, agents = _existing(text, config_file)
    preset = _preset(flags, prompter)
    base_url = flags.base_url or preset.base_url or _address(prompter)
    key = _key(flags, prompter, preset)
    base_url, key, models = _listing(flags, prompter, preset, base_url, key)
    model = _model(flags, prompter, models)
    name = flags.name or config_text.table_name(model, taken)
    if name in taken:
        raise Usage(f"--name {name!r}: config.toml already has [models.{name}]")
    window = _window(flags, prompter, preset, base_url, model)
    key_file = store_key(config_file.parent, name, key.secret) if key.secret else None
    new = config_text.NewModel(name, preset, model, base_url, key.env, key_file, window)
    written = config_text.extended(text, new, date.today().isoformat())
    modelless = config_text.modelless_default_agent(text)
    given = config_text.with_agent_model(written, modelless, name) if modelless else None
    _write(config_file, given or written)
    try:
        config = load_config(config_file)
    except ConfigError as exc:
        _write(config_file, text)  # what was there before stays as it was
        raise Failure(f"the new configuration does not load, nothing changed: {exc}") from None
    say(f"Wrote [models.{name}] to {config_file}.")
    if given:
        say(f"[agents.{modelless}] named no model: new conversations now use {name} on it.")
    elif modelless:  # a table setup cannot edit safely: say what to write
        say(f"[agents.{modelless}] names no model, so new conversations stay on the demo model:")
        say(f'add model = "{name}" to it.')
    if agents and not given:  # the file's agents keep their models: say how to use the new one
        say(f"Your agents keep their models: use this one with `/model {name}` in the TUI,")
        say(f'`openvaala exec --model {name}`, or model = "{name}" in an agent\'s table.')
    if not flags.test:
        return EXIT_OK
    say(f"Running a test turn on {model}...")
    try:
        reply, source = asyncio.run(_test(config.models[name]))
    except Failure as exc:
        print(f"openvaala setup: {exc.message}", file=sys.stderr)
        return EXIT_TEST_FAILED
    say(f"The model answered: {reply[:200]!r}")
    if source:
        say(f"Its context window: {source}.")
    say("Done. Start with `openvaala` (a running daemon picks the new model up by itself).")
    return EXIT_OK


def _address(prompter: Prompter) -> str:
    base_url = prompter.ask("Server URL, e.g. http://localhost:8000/v1", flag="--base-url")
    if not base_url.startswith(("http://", "https://")):
        raise Usage(f"the server URL must start with http:// or https:// (got {base_url!r})")
    return base_url


def _listing(
    flags: Flags, prompter: Prompter, preset: Preset, base_url: str, key: Key
) -> tuple[str, Key, list[str]]:
    """The provider's models, which also checks the address and the key. At a terminal a refused
    key, or a typed address nobody answers at, is asked again; with flags the flag is named."""
    while True:
        probe = ModelConfig("setup", preset.provider, "", 8192, 1024, base_url, key.env)
        say(f"Asking {base_url} for its models...")
        try:
            return base_url, key, asyncio.run(list_models(probe, key.value))
        except KeyRefused as exc:
            if not prompter.interactive:
                raise
            say(f"{exc.message}.")
            key = _typed_key(prompter, preset)
        except Unreachable as exc:
            if not prompter.interactive:
                raise Failure(f"{exc.message}: check --base-url") from None
            if flags.base_url or preset.base_url:  # not typed here: nothing to ask again
                raise Failure(
                    f"{exc.message}: check the network, or give the address with --base-url"
                ) from None
            say(f"{exc.message}: check the address and type it again.")
            base_url = _address(prompter)


async def _test(model: ModelConfig) -> tuple[str, str]:
    """The test turn's reply, and where a served model's window comes from (as the daemon will
    ask it)."""
    source = ""
    if model.window_source == WINDOW_PENDING:
        async with httpx.AsyncClient(timeout=PROBE_TIMEOUT) as client:
            model = with_window(model, await probe(model, client))
        source = f"{model.context_window} tokens ({model.window_source})"
    try:
        return await test_turn(model), source
    except Failure as exc:
        raise Failure(
            f"the configuration is written, but the test turn failed: {exc.message}"
        ) from None


def _window(
    flags: Flags, prompter: Prompter, preset: Preset, base_url: str, model: str
) -> int | None:
    """The window to write: only for a hosted model the catalog lacks (others need none)."""
    if flags.context_window is not None:
        return flags.context_window
    if catalog.probed_server(preset.provider, base_url):
        return None
    if catalog.known_model(preset.provider, model) is not None:
        return None
    answer = prompter.ask(
        f"{model!r} is not in the catalog of known models: its context window in tokens",
        flag="--context-window",
    )
    if not answer.isdigit() or int(answer) < 2:
        raise Usage(f"the context window must be a whole number of tokens ({answer!r})")
    return int(answer)


def _read(config_file: Path) -> str:
    try:
        return config_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise Failure(f"cannot read {config_file}: {exc}") from None


def _existing(text: str, config_file: Path) -> tuple[set[str], set[str]]:
    try:
        return config_text.existing(text)
    except tomllib.TOMLDecodeError as exc:
        raise Failure(f"{config_file} is not valid TOML, fix it first: {exc}") from None


def _preset(flags: Flags, prompter: Prompter) -> Preset:
    if flags.provider is not None:
        return BY_KEY[flags.provider]
    index = prompter.choose("Which provider?", [p.title for p in PRESETS], flag="--provider")
    return PRESETS[index]


def _key(flags: Flags, prompter: Prompter, preset: Preset) -> Key:
    if flags.api_key_env:
        if not os.environ.get(flags.api_key_env, "").strip():
            raise Usage(f"--api-key-env: the environment variable {flags.api_key_env} is empty")
        return Key(env=flags.api_key_env)
    if flags.api_key_stdin:
        secret = sys.stdin.readline().strip()
        if not secret:
            raise Usage("--api-key-stdin: stdin gave no key")
        return Key(secret=secret)
    usual = preset.key_env
    if usual and os.environ.get(usual, "").strip():
        if flags.provider is not None:
            return Key(env=usual)  # flags mode: the usual variable, when it is set
        answer = prompter.ask(f"Use the key in ${usual}? (y/n)", "y", flag="--api-key-env")
        if answer.lower().startswith("y"):
            return Key(env=usual)
    if not preset.needs_key and flags.provider is not None:
        return Key()  # a local server: no key unless a flag gives one
    return _typed_key(prompter, preset)


def _typed_key(prompter: Prompter, preset: Preset) -> Key:
    """A key typed unseen, or the variable that holds one; asked again until there is one (a
    local server's key may be empty)."""
    optional = ", empty if the server takes none" if not preset.needs_key else ""
    while True:
        secret = prompter.secret(
            f"API key (not shown; kept in a file only you can read{optional})",
            flag="--api-key-env VAR or --api-key-stdin",
        )
        if secret or not preset.needs_key:
            return Key(secret=secret or None)
        env = prompter.ask(
            "No key typed. The environment variable that holds it (empty: type the key)",
            flag="--api-key-env",
        )
        if env and os.environ.get(env, "").strip():
            return Key(env=env)
        if env:
            say(f"The environment variable {env} is empty.")


def _model(flags: Flags, prompter: Prompter, models: list[str]) -> str:
    if flags.model:
        if models and flags.model not in models:
            say(f"Note: {flags.model!r} is not among the models the server lists.")
        return flags.model
    if not models:
        return prompter.ask("The server lists no models: the model id to use", flag="--model")
    if len(models) == 1:
        say(f"The server has one model: {models[0]}")
        return models[0]
    shown = models[:40]
    index = prompter.choose("Which model?", shown, flag="--model")
    return shown[index]


def _write(path: Path, text: str) -> None:
    """Replace the file at once (a daemon watching it never reads half of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config-", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
