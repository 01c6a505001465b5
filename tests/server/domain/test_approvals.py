"""The approval policy as pure functions: what runs, what asks, what is refused."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from openvaala_server.domain import records as r
from openvaala_server.domain.approvals import (
    Ask,
    Grant,
    GrantOffer,
    NoGrant,
    Refuse,
    Run,
    allowed_by,
    decide,
    denied_by,
    grant_offer,
    grants_for,
)
from openvaala_server.domain.meta import fold, grant_record
from openvaala_server.domain.permissions import Access, Permissions

WS = Path("/work/project")
DATA = Path("/home/u/.local/share/openvaala")


def shell(command: str, outside: str | None = None) -> Access:
    return Access(summary=command, command=command, outside_sandbox=outside)


def write(*paths: str) -> Access:
    return Access(summary="write", writes=tuple(Path(p) for p in paths))


def perms(**values: object) -> Permissions:
    return Permissions(**values)  # type: ignore[arg-type]


# -- allow and deny patterns -------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "git diff; rm -rf ~",
        "git diff && curl x | sh",
        "git diff || true",
        "git diff | sh",
        "git diff & sleep 9",
        "git diff `id`",
        "git diff $(id)",
        "git diff > /etc/passwd",
        "git diff < /dev/zero",
        "git diff\nrm -rf ~",
    ],
)
def test_allow_never_matches_a_command_with_control_operators(command: str) -> None:
    assert allowed_by(["git diff*"], command) is None
    assert isinstance(
        decide(perms(approval="always", allow=("git diff*",)), "shell", shell(command), WS), Ask
    )


def test_allow_matches_whole_commands_with_star_as_only_wildcard() -> None:
    assert allowed_by(["git diff*"], "git diff --stat") == "git diff*"
    assert allowed_by(["git status"], "git status") == "git status"
    assert allowed_by(["git status"], "git status --short") is None
    assert allowed_by(["ls ?"], "ls a") is None  # `?` is literal
    assert allowed_by(["git  status"], "git status ") == "git  status"


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /",
        "  rm   -rf /home",
        "cd /tmp && rm -rf /",
        "echo hi; rm -rf /etc",
        "sudo rm -rf /",
        'r"m" -rf /',
        "true | rm -rf /x",
        "echo $(rm -rf /)",
    ],
)
def test_deny_errs_on_matching_each_simple_command(command: str) -> None:
    assert denied_by(["rm -rf /*"], command) == "rm -rf /*"
    for approval in ("always", "escalate", "never"):
        decision = decide(
            perms(approval=approval, sandbox="off", deny=("rm -rf /*",)),
            "shell",
            shell(command),
            WS,
        )
        assert isinstance(decision, Refuse)
        assert "rm -rf /*" in decision.reason


def test_deny_beats_allow_and_grants() -> None:
    p = perms(approval="always", allow=("rm *",), deny=("rm -rf /*",))
    grant = Grant("shell", "command", "rm -rf")
    assert isinstance(decide(p, "shell", shell("rm -rf /"), WS, [grant]), Refuse)


# -- the modes ----------------------------------------------------------------------------


def test_always_asks_for_shell_commands_not_allowed_and_for_every_write() -> None:
    p = perms(approval="always", allow=("git status",))
    assert decide(p, "shell", shell("git status"), WS) == Run()
    asked = decide(p, "shell", shell("echo hi"), WS)
    assert isinstance(asked, Ask) and not asked.outside_sandbox and "always" in asked.reason
    inside = decide(p, "write_file", write("/work/project/a.txt"), WS)
    assert isinstance(inside, Ask) and not inside.outside_sandbox
    outside = decide(p, "write_file", write("/elsewhere/a.txt"), WS)
    assert isinstance(outside, Ask) and outside.outside_sandbox


def test_escalate_runs_what_the_sandbox_allows_and_asks_for_the_rest() -> None:
    p = perms()  # workspace sandbox, escalate
    assert decide(p, "shell", shell("make"), WS) == Run()
    assert decide(p, "write_file", write("/work/project/src/a.py"), WS) == Run()
    outside = decide(p, "write_file", write("/work/other/a.py"), WS)
    assert isinstance(outside, Ask) and outside.outside_sandbox
    assert (
        "/work/other/a.py" in outside.reason and "outside the working directory" in outside.reason
    )
    escalated = decide(p, "shell", shell("curl example.org", "needs the network to fetch x"), WS)
    assert escalated == Ask("needs the network to fetch x", outside_sandbox=True)


def test_escalate_in_read_only_asks_for_any_write() -> None:
    p = perms(sandbox="read-only")
    asked = decide(p, "edit_file", write("/work/project/a.py"), WS)
    assert isinstance(asked, Ask) and "read-only" in asked.reason and asked.outside_sandbox
    assert decide(p, "shell", shell("ls"), WS) == Run()


def test_no_sandbox_blocks_nothing() -> None:
    p = perms(sandbox="off")
    assert decide(p, "write_file", write("/anywhere/a"), WS) == Run()
    assert decide(p, "shell", shell("curl x", "network"), WS) == Run()


def test_never_never_asks_and_refuses_what_the_sandbox_blocks() -> None:
    p = perms(approval="never")
    assert decide(p, "shell", shell("echo hi"), WS) == Run()
    refused = decide(p, "write_file", write("/etc/x"), WS)
    assert isinstance(refused, Refuse)
    assert "/etc/x" in refused.reason and "never" in refused.reason
    assert isinstance(decide(p, "shell", shell("curl x", "net"), WS), Refuse)


def test_protected_paths_are_refused_even_without_a_sandbox() -> None:
    p = perms(sandbox="off", approval="never")
    refused = decide(p, "write_file", write(f"{DATA}/token"), WS, protected=[DATA])
    assert isinstance(refused, Refuse) and "configuration directory" in refused.reason


def test_a_call_with_nothing_to_guard_runs() -> None:
    assert decide(perms(approval="always"), "spawn_agent", None, WS) == Run()


# -- grants -------------------------------------------------------------------------------


def test_a_grant_covers_the_same_tool_and_exact_command_only() -> None:
    p = perms(approval="always")
    [grant] = grants_for("shell", shell("git push origin main"), outside_sandbox=False)
    assert grant == Grant("shell", "command", "git push origin main", False)
    assert decide(p, "shell", shell("git  push origin   main"), WS, [grant]) == Run()
    assert isinstance(decide(p, "shell", shell("git push --force"), WS, [grant]), Ask)
    chained = shell("git push origin main && rm -rf ~")
    assert isinstance(decide(p, "shell", chained, WS, [grant]), Ask)
    assert isinstance(decide(p, "other_shell", shell("git push origin main"), WS, [grant]), Ask)


@pytest.mark.parametrize(
    ("approved", "later"),
    [
        ("git push origin HEAD:main", "git push --receive-pack='touch /tmp/x' origin HEAD:main"),
        ("git push origin HEAD:main", "git push --upload-pack=evil origin HEAD:main"),
        ("python3 -c 'print(1+1)'", "python3 -c 'import os; os.system(\"id\")'"),
        ("perl -e 1", "perl -e 'system q(id)'"),
        ("find . -name x", "find . -name x -exec sh {} ;"),
    ],
)
def test_an_outside_grant_never_widens_to_options_that_run_programs(
    approved: str, later: str
) -> None:
    offer = grant_offer("shell", shell(approved, "network"), outside_sandbox=True)
    assert isinstance(offer, GrantOffer) and f"`{approved}`" in offer.scope
    assert "outside the sandbox" in offer.scope
    asked = decide(perms(), "shell", shell(later, "network"), WS, list(offer.grants))
    assert isinstance(asked, Ask)


def test_a_grant_of_an_older_version_covers_its_own_text_only() -> None:
    old_prefix = Grant("shell", "command", "git push", True)  # kept by earlier versions
    assert isinstance(
        decide(perms(), "shell", shell("git push --receive-pack=x", "net"), WS, [old_prefix]), Ask
    )


def test_a_grant_lets_a_call_out_of_the_sandbox_only_if_the_approved_one_went_out() -> None:
    p = perms()
    inside = Grant("shell", "command", "curl x", False)
    asked = decide(p, "shell", shell("curl x", "network"), WS, [inside])
    assert isinstance(asked, Ask)
    outside = Grant("shell", "command", "curl x", True)
    assert decide(p, "shell", shell("curl x", "network"), WS, [outside]) == Run(
        outside_sandbox=True
    )


def test_a_path_grant_covers_the_same_path_and_tool() -> None:
    p = perms()
    grants = grants_for("write_file", write("/work/other/a.py"), outside_sandbox=True)
    assert grants == [Grant("write_file", "path", "/work/other/a.py", True)]
    assert decide(p, "write_file", write("/work/other/a.py"), WS, grants) == Run(
        outside_sandbox=True
    )
    assert isinstance(decide(p, "write_file", write("/work/other/b.py"), WS, grants), Ask)
    assert isinstance(decide(p, "edit_file", write("/work/other/a.py"), WS, grants), Ask)


def test_nothing_is_granted_for_a_command_with_control_operators() -> None:
    assert grants_for("shell", shell("make && make install"), outside_sandbox=False) == []
    offer = grant_offer("shell", shell("echo one > a.txt"), outside_sandbox=False)
    assert isinstance(offer, NoGrant) and "shell operator" in offer.reason


# -- remembered in metadata.jsonl ------------------------------------------------------------


def test_grants_fold_from_metadata_records_and_damaged_ones_grant_nothing() -> None:
    created = {
        "type": r.CONVERSATION_CREATED,
        "ts": "t0",
        "conversationId": "c" * 32,
        "cwd": "/w",
        "agent": "default",
        "model": "demo",
        "rootSessionId": "a" * 32,
    }
    grant = Grant("shell", "command", "git push", True)
    records: list[Mapping[str, object]] = [
        created,
        {"ts": "t1", **grant_record(grant, "a" * 32)},
        {"ts": "t2", **grant_record(grant, "a" * 32)},  # the same grant twice counts once
        {"type": r.APPROVAL_GRANTED, "ts": "t3", "tool": "shell", "kind": "glob", "pattern": "*"},
    ]
    meta = fold(records)
    assert meta.grants == [grant]
    assert meta.unknown_records == 1
