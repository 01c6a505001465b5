import compileall
from pathlib import Path

import pytest
from hypothesis import settings

pytest_plugins = ["tests.support.daemon", "tests.fakes.fixtures"]

# Property tests check results, never speed: a deadline per example only measures how busy the
# machine is (the suite runs on 2 cores beside daemons and a browser), so none is set.
settings.register_profile("openvaala", deadline=None)
# `-m fast` (the developer's quick loop, docs/design.md "Fast core tests"): the same properties
# on fewer examples; the full run keeps the default number.
settings.register_profile("openvaala-fast", deadline=None, max_examples=20)
settings.load_profile("openvaala")

# In-process tests of pure code and of the runtime on the in-memory store: no daemon, no
# socket, no provider server. `python3 -m pytest -m fast -n 0 -q` runs these alone.
FAST = (
    "tests/server/domain/",
    "tests/server/protocol/",
    "tests/server/models/test_parsers_",
    "tests/server/models/test_retry_policy.py",
    "tests/server/models/test_wire_cache.py",
    "tests/server/models/test_assembly.py",
    "tests/server/models/test_image_parts.py",
    "tests/server/runtime/test_approvals.py",
    "tests/server/test_config_context.py",
    "tests/server/test_config_typos.py",
    "tests/server/test_import_contracts.py",
    "tests/server/test_error_tree.py",
    "tests/server/test_structured_supervisor.py",
    "tests/server/runtime/test_retrying.py",
    "tests/server/runtime/test_subagents.py",
    "tests/client/test_view.py",
    "tests/client/test_view_approvals.py",
    "tests/client/test_fold_streams.py",
    "tests/codex/test_events.py",
    "tests/server/runtime/test_approvals_lifecycle.py",
    "tests/server/runtime/test_compaction_fork.py",
    "tests/server/runtime/test_cwd_off_loop.py",
    "tests/server/runtime/test_hub_replay.py",
    "tests/server/runtime/test_inbox.py",
    "tests/server/runtime/test_interrupt.py",
    "tests/server/runtime/test_runtime_owns_background.py",
    "tests/server/runtime/test_storage_failure.py",
    "tests/server/runtime/test_subagents_in_process.py",
    "tests/server/runtime/test_turn_loop.py",
)


def _fast_only(config: pytest.Config) -> bool:
    """Whether the run selects fast tests only (`-m fast`, `-m "fast and ..."`)."""
    expression = " ".join(str(config.option.markexpr or "").split())
    return expression == "fast" or expression.startswith("fast and ")


def pytest_configure(config: pytest.Config) -> None:
    if _fast_only(config):
        settings.load_profile("openvaala-fast")
    if not _fast_only(config) and not hasattr(config, "workerinput"):
        _compile_once()


def _compile_once() -> None:
    """Write the project's bytecode before the daemons, bridges and CLIs start.

    Where PYTHONDONTWRITEBYTECODE is set (as on CI's machines), no process writes __pycache__,
    so every one of the suite's ~1,000 subprocesses compiled the whole package again: 0.3 s of
    CPU each. Existing bytecode is still read under that variable; `compileall` writes it
    regardless, once, in the controller before the workers start.
    """
    root = Path(__file__).resolve().parent.parent
    for package in ("openvaala_server", "openvaala_tui", "openvaala_lsp", "openvaala_acp", "tests"):
        compileall.compile_dir(root / package, quiet=1)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With `-m fast`, other test modules are not even imported: importing the browser, TUI and
    editor test modules took longer than running every fast test."""
    if not _fast_only(config):
        return None
    try:
        path = collection_path.relative_to(config.rootpath).as_posix()
    except ValueError:
        return None
    if collection_path.is_dir():
        inside = path + "/"
        return not any(fast.startswith(inside) or inside.startswith(fast) for fast in FAST)
    if collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return not path.startswith(FAST)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            path = item.path.relative_to(config.rootpath).as_posix()
        except ValueError:
            continue
        if path.startswith(FAST):
            item.add_marker(pytest.mark.fast)
