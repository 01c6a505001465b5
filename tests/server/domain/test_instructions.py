"""The system prompt's parts, pure (domain/instructions.py, domain/environment.py, prompts/):
the environment block's bound, when it is rewritten, the cap on instruction files and the
family whose notes follow the base prompt."""

from __future__ import annotations

import pytest

from openvaala_server import prompts
from openvaala_server.domain.environment import (
    MAX_TOKENS,
    Facts,
    GitState,
    environment_text,
    limits_sentence,
    settled,
)
from openvaala_server.domain.instructions import Doc, Memory, assemble, cap_docs
from openvaala_server.domain.permissions import Permissions
from openvaala_server.domain.usage import estimate_text


def _facts(branch: str = "main", status: tuple[str, ...] = (), cwd: str = "/p") -> Facts:
    return Facts(
        "Linux 6 (x86_64)", "bash", "2026-12-06 (Sunday)", cwd, GitState("/p", branch, status)
    )


def test_the_environment_block_stays_under_its_bound_in_a_huge_repository() -> None:
    deep = "/" + "/".join(["directory"] * 120)
    facts = Facts(
        "Linux " + "x" * 500,
        "bash",
        "2026-12-06 (Sunday)",
        deep,
        GitState(deep, "feature/" + "b" * 300, tuple(f"?? {'f' * 200}{n}" for n in range(8)), 5000),
    )
    agents = [(f"agent{n}", "d" * 300) for n in range(40)]
    text = environment_text(facts, limits_sentence(Permissions(), False), agents, "default")
    assert estimate_text(text) <= MAX_TOKENS
    assert "Working directory: /directory/" in text and "Agents you may spawn: " in text
    assert "more" in text  # what was left out is said


def test_the_block_is_kept_while_only_the_git_status_changed() -> None:
    first = _facts(status=("?? a.py",))
    assert settled(first, _facts(status=("?? a.py", "?? b.py"))) is first
    switched = _facts(branch="feature")
    assert settled(first, switched) is switched
    moved = _facts(cwd="/p/sub", status=("?? a.py",))
    assert settled(first, moved) is moved
    assert settled(None, first) is first


@pytest.mark.parametrize(
    ("perms", "network", "says"),
    [
        (Permissions(), False, "may write only inside the working directory, without network"),
        (Permissions(sandbox="read-only", approval="never"), False, "read-only sandbox"),
        (Permissions(sandbox="off"), True, "without a sandbox, with network access"),
        (Permissions(approval="always"), False, "every write and every command not in the allow"),
        (Permissions(approval="never"), False, "refused, nobody is asked"),
    ],
)
def test_the_limits_in_one_sentence(perms: Permissions, network: bool, says: str) -> None:
    sentence = limits_sentence(perms, network)
    assert says in sentence and sentence.count(".") == 1


def test_the_cap_is_spent_nearest_first() -> None:
    docs = [Doc("/user", "u" * 30), Doc("/root", "r" * 50), Doc("/root/app", "a" * 40)]
    assert [cut for _, cut in cap_docs(docs, 70)] == [30, 20, 0]
    assert [cut for _, cut in cap_docs(docs, 1000)] == [0, 0, 0]


def test_the_parts_join_with_one_separator_and_skip_what_is_empty() -> None:
    parts = assemble(
        ("Base prompt", "BASE"),
        ("Agent instructions", ""),
        "<environment>",
        None,
        [Doc("/r/AGENTS.md", "rules" * 10)],
        [Memory("user", "/c/MEMORY.md", "- tabs\n"), Memory("project", "/r/M.md", "  ")],
        20,
    )
    assert [p.kind for p in parts] == ["base", "environment", "agents_md", "memory"]
    joined = "".join(p.text for p in parts)
    assert joined.startswith("BASE\n\n<environment>\n\nInstructions from /r/AGENTS.md:\nrules")
    assert parts[2].label == "Project instructions: /r/AGENTS.md (cut)"
    assert "30 characters over the 20-character cap" in parts[2].text
    assert parts[3].text.endswith("\n- tabs")


@pytest.mark.parametrize(
    ("provider", "model", "family"),
    [
        ("anthropic", "claude-sonnet-4-5", "anthropic"),
        ("openai", "anthropic/claude-opus-4", "anthropic"),
        ("openai_responses", "gpt-4.1", "openai"),
        ("openai", "gpt-5-codex", "openai"),
        ("openai", "openai/o4-mini", "openai"),
        ("openai", "qwen2.5-coder:7b", "default"),
        ("demo", "demo", "default"),
    ],
)
def test_the_family_comes_from_the_provider_and_the_model(
    provider: str, model: str, family: str
) -> None:
    assert prompts.family_of(provider, model) == family
    text = prompts.base_prompt(prompts.family_of(provider, model))
    assert "update_plan" in text and "apply_patch" in text and "AGENTS.md" in text
