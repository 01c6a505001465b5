"""A call that reaches the network from the daemon itself (`Access.network`, web_fetch) under
each approval mode: it runs where the agent has the network, asks under `escalate`, and is
refused under `never` (docs/security.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from openvaala_server.domain.approvals import Ask, Refuse, Run, decide
from openvaala_server.domain.permissions import Access, Permissions

FETCH = Access(summary="fetch https://example.org/", network="example.org")
WORKSPACE = Path("/work/project")


@pytest.mark.parametrize("approval", ["escalate", "always", "never"])
def test_an_agent_with_the_network_fetches_without_asking(approval: str) -> None:
    permissions = Permissions(network=True, approval=approval)  # type: ignore[arg-type]
    assert decide(permissions, "web_fetch", FETCH, WORKSPACE) == Run()


def test_without_the_network_escalate_asks_naming_the_host() -> None:
    decision = decide(
        Permissions(network=False, approval="escalate"), "web_fetch", FETCH, WORKSPACE
    )
    assert isinstance(decision, Ask) and "example.org" in decision.reason


def test_without_the_network_never_refuses() -> None:
    decision = decide(Permissions(network=False, approval="never"), "web_fetch", FETCH, WORKSPACE)
    assert isinstance(decision, Refuse)


def test_sandbox_off_means_the_network_too() -> None:
    permissions = Permissions(sandbox="off", network=False, approval="escalate")
    assert decide(permissions, "web_fetch", FETCH, WORKSPACE) == Run()
