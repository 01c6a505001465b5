"""Every permission mode against every agent setting: a call is never treated more leniently
under a mode than under the agent's configuration alone (docs/security.md, "Permission modes")."""

from __future__ import annotations

import itertools
from pathlib import Path

from openvaala_server.domain.approvals import Ask, Decision, Refuse, Run, decide
from openvaala_server.domain.permission_mode import PERMISSION_MODES, apply_mode
from openvaala_server.domain.permissions import (
    APPROVAL_MODES,
    SANDBOX_MODES,
    Access,
    Bound,
    Permissions,
)

WORK = Path("/work/project")
ACCESSES = (
    Access(summary="write a.py", writes=(WORK / "a.py",)),
    Access(summary="write ~/x", writes=(Path("/home/u/x"),)),
    Access(summary="write .git/hooks/pre-commit", writes=(WORK / ".git/hooks/pre-commit",)),
    Access(summary="ls", command="ls"),
    Access(summary="make", command="make"),
    Access(summary="make install", command="make install", outside_sandbox="needs /usr"),
    Access(summary="fetch", network="example.org"),
)
SANDBOX_ORDER = {"read-only": 0, "workspace": 1, "off": 2}


def leniency(decision: Decision) -> int:
    if isinstance(decision, Refuse):
        return 0
    if isinstance(decision, Ask):
        return 1
    assert isinstance(decision, Run)
    return 3 if decision.outside_sandbox else 2


def test_no_mode_widens_any_agent() -> None:
    parents = ((), (Bound("lead", "always"),), (Bound("lead", "never"),))
    for sandbox, approval, network, inherited in itertools.product(
        SANDBOX_MODES, APPROVAL_MODES, (False, True), parents
    ):
        agent = Permissions(
            sandbox=sandbox, approval=approval, network=network, allow=("ls",), inherited=inherited
        )
        for mode in PERMISSION_MODES:
            narrowed = apply_mode(agent, mode)
            case = f"{agent} in {mode}"
            assert SANDBOX_ORDER[narrowed.sandbox] <= SANDBOX_ORDER[sandbox], case
            assert narrowed.network <= network, case
            assert narrowed.deny == agent.deny and narrowed.limits == agent.limits, case
            assert set(agent.inherited) <= set(narrowed.inherited), case
            for access, tool in itertools.product(ACCESSES, ("shell", "write_file")):
                before = decide(agent, tool, access, WORK)
                after = decide(narrowed, tool, access, WORK)
                assert leniency(after) <= leniency(before), f"{case}: {access.summary}"
