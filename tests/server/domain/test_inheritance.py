"""A subagent's permissions are the stricter of its own and its parent's (domain/inheritance.py),
and the approval policy applies every level (docs/security.md, "Subagents")."""

from __future__ import annotations

from pathlib import Path

from openvaala_server.domain.approvals import Ask, Refuse, Run, decide
from openvaala_server.domain.inheritance import narrowed, wider
from openvaala_server.domain.permissions import Access, Limits, Permissions

WS = Path("/work/project")
OPS = Permissions(sandbox="off", network=True, approval="never")


def shell(command: str) -> Access:
    return Access(summary=command, command=command)


def write(path: str) -> Access:
    return Access(summary="write", writes=(Path(path),))


def test_the_child_gets_the_stricter_sandbox_network_and_every_deny() -> None:
    parent = Permissions(sandbox="read-only", deny=("rm -rf *",))
    child = narrowed(Permissions(sandbox="off", network=True, deny=("sudo *",)), parent, "root")
    assert child.sandbox == "read-only" and not child.network
    assert child.deny == ("sudo *", "rm -rf *")
    # ...and never more than what it asked for itself.
    assert narrowed(Permissions(sandbox="read-only"), OPS, "root").sandbox == "read-only"


def test_the_child_gets_the_smaller_of_each_limit() -> None:
    parent = Permissions(limits=Limits(processes=64, memory_mb=32768, tmp_mb=100))
    child = narrowed(Permissions(limits=Limits(processes=4096, memory_mb=512)), parent, "root")
    assert child.limits == Limits(processes=64, memory_mb=512, tmp_mb=100)


def test_an_ops_child_of_a_workspace_parent_cannot_write_home_unasked() -> None:
    child = narrowed(OPS, Permissions(), "root")
    # ops's own "never": what the parent's sandbox blocks is refused, not asked.
    assert isinstance(decide(child, "write_file", write("/home/u/.bashrc"), WS), Refuse)
    escalating = narrowed(Permissions(sandbox="off"), Permissions(), "root")
    assert isinstance(decide(escalating, "write_file", write("/home/u/.bashrc"), WS), Ask)
    assert decide(escalating, "write_file", write("/work/project/a"), WS) == Run()


def test_always_above_never_asks_for_every_command_and_lets_nothing_out() -> None:
    child = narrowed(Permissions(approval="never"), Permissions(approval="always"), "root")
    asked = decide(child, "shell", shell("ls"), WS)
    assert isinstance(asked, Ask) and "'root'" in asked.reason and "always" in asked.reason
    assert isinstance(decide(child, "write_file", write("/etc/x"), WS), Refuse)
    # The parent's own `allow` lets a command through only if the child's allows it as well.
    allowed = narrowed(
        Permissions(approval="always", allow=("ls*",)),
        Permissions(approval="always", allow=("ls*",)),
        "root",
    )
    assert decide(allowed, "shell", shell("ls -l"), WS) == Run()


def test_wider_names_every_way_a_child_exceeds_its_parent() -> None:
    assert wider(Permissions(), Permissions()) == []
    found = " | ".join(wider(OPS, Permissions(approval="always", deny=("sudo *",))))
    assert 'sandbox = "off"' in found and "network" in found
    assert '"always"' in found and "sudo *" in found
    assert wider(Permissions(sandbox="read-only", approval="never"), Permissions()) == []
