"""The permission mode narrows an agent's permissions and never widens them
(domain/permission_mode.py, docs/security.md "Permission modes")."""

from __future__ import annotations

from pathlib import Path

from openvaala_server.domain.approvals import Ask, Refuse, Run, decide
from openvaala_server.domain.permission_mode import allowed_modes, apply_mode, effective
from openvaala_server.domain.permissions import Access, Permissions

WORK = Path("/work/project")
EDIT = Access(summary="write a.py", writes=(WORK / "a.py",))
LS = Access(summary="ls", command="ls")


def test_auto_edit_and_no_choice_leave_the_configuration_as_it_is() -> None:
    perms = Permissions()
    assert apply_mode(perms, None) == perms
    assert apply_mode(perms, "auto-edit") == perms
    assert isinstance(decide(perms, "write_file", EDIT, WORK), Run)


def test_ask_asks_every_write_and_command_but_the_allowed() -> None:
    perms = apply_mode(Permissions(allow=("ls",)), "ask")
    asked = decide(perms, "write_file", EDIT, WORK)
    assert isinstance(asked, Ask) and 'permission mode is "ask"' in asked.reason
    assert isinstance(decide(perms, "shell", LS, WORK), Run)  # in the agent's `allow`
    other = Access(summary="make", command="make")
    assert isinstance(decide(perms, "shell", other, WORK), Ask)


def test_plan_refuses_writes_even_where_the_sandbox_is_off() -> None:
    perms = apply_mode(Permissions(sandbox="off"), "plan")
    assert perms.sandbox == "read-only"
    refused = decide(perms, "write_file", EDIT, WORK)
    assert isinstance(refused, Refuse) and "plan mode" in refused.reason
    assert isinstance(decide(perms, "shell", LS, WORK), Run)  # reading runs


def test_a_mode_wider_than_the_agent_counts_as_its_ceiling() -> None:
    careful = Permissions(approval="always")
    assert allowed_modes(careful) == ("plan", "ask")
    assert effective("auto-edit", careful) == "ask"
    assert apply_mode(careful, "auto-edit") == careful  # asks already: nothing added
    assert allowed_modes(Permissions()) == ("plan", "ask", "auto-edit")
