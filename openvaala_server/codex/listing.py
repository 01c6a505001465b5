"""`thread/list`'s filters (pure; docs/codex.md "Listing threads").

Codex's rules, over OpenVaala's threads: a conversation's thread has the source Codex's own
`codex app-server` gives the threads it hosts (`vscode`), so it is one of the "interactive"
threads listed when `sourceKinds` is absent or empty, and when it names `cli` or `vscode`; a
subagent's thread is a `subAgentThreadSpawn`, listed when `sourceKinds` names that kind or
`subAgent`. `cwd` is one path or several, matched exactly; `modelProviders` an allowlist
(empty: all); `includedThreadIds` and `excludedThreadIds` up to 100 thread ids each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, get_args

from openvaala_server import errors
from openvaala_server.codex import protocol, wire
from openvaala_server.codex.ids import openvaala_id
from openvaala_server.protocol.json_types import JsonObject

KINDS: Final[frozenset[str]] = frozenset(get_args(protocol.ThreadSourceKind))
# What Codex lists when `sourceKinds` is absent or empty (its interactive sources).
INTERACTIVE: Final = frozenset({"cli", "vscode"})
CONVERSATION_SOURCE: Final = "vscode"
SUBAGENT_KINDS: Final = frozenset({"subAgent", "subAgentThreadSpawn"})
MAX_IDS: Final = 100  # Codex's bound on included/excluded thread ids


@dataclass(frozen=True)
class ThreadFilter:
    kinds: frozenset[str]  # the source kinds asked for
    cwds: frozenset[str] | None = None  # None: any directory
    providers: frozenset[str] | None = None  # None: any provider
    included: frozenset[str] | None = None  # OpenVaala ids; None: no restriction
    excluded: frozenset[str] = frozenset()

    @property
    def conversations(self) -> bool:
        """Whether conversations' own threads can match."""
        return CONVERSATION_SOURCE in self.kinds

    @property
    def subagents(self) -> bool:
        """Whether subagents' threads can match."""
        return bool(self.kinds & SUBAGENT_KINDS)

    def matches(self, thread: wire.Thread) -> bool:
        plain = thread["id"].replace("-", "")
        return (
            bool(source_kinds(thread["source"]) & self.kinds)
            and (self.cwds is None or thread["cwd"] in self.cwds)
            and (self.providers is None or thread["modelProvider"] in self.providers)
            and (self.included is None or plain in self.included)
            and plain not in self.excluded
        )


def source_kinds(source: wire.SessionSource) -> frozenset[str]:
    """The `sourceKinds` a thread's source answers to."""
    if isinstance(source, str):
        return frozenset({source})
    if "subAgent" in source:
        sub = source["subAgent"]  # type: ignore[typeddict-item]
        kind = {"review": "subAgentReview", "compact": "subAgentCompact"}.get(str(sub))
        if isinstance(sub, dict):
            kind = "subAgentThreadSpawn" if "thread_spawn" in sub else None
        return frozenset({"subAgent", kind or "subAgentOther"})
    return frozenset({"unknown"})


def thread_filter(p: JsonObject, *, below: bool = False) -> ThreadFilter:
    """The filter `thread/list`'s params ask for, or `invalid_params` naming the one that is
    wrong. `below`: listing a thread's subagents (`parentThreadId`, `ancestorThreadId`), where
    no `sourceKinds` means every subagent kind."""
    if p.get("parentThreadId") is not None and p.get("ancestorThreadId") is not None:
        raise errors.InvalidParams(
            "parentThreadId and ancestorThreadId are mutually exclusive", param="ancestorThreadId"
        )
    originators = _strings(p, "originators")
    if originators:
        raise errors.InvalidParams(
            "originator filtering is not supported by OpenVaala's app-server",
            param="originators",
        )
    asked = _strings(p, "sourceKinds")
    unknown = sorted(set(asked or ()) - KINDS)
    if unknown:
        raise errors.InvalidParams(
            f"unknown sourceKinds {unknown[0][:40]!r}: expected one of {', '.join(sorted(KINDS))}",
            param="sourceKinds",
        )
    kinds = frozenset(asked) if asked else (SUBAGENT_KINDS if below else INTERACTIVE)
    cwd = p.get("cwd")
    cwds = frozenset([cwd]) if isinstance(cwd, str) else _strings(p, "cwd")
    providers = _strings(p, "modelProviders")
    included = _ids(p, "includedThreadIds")
    return ThreadFilter(
        kinds=kinds,
        cwds=None if cwds is None else frozenset(cwds),
        providers=frozenset(providers) if providers else None,
        included=included,
        excluded=_ids(p, "excludedThreadIds") or frozenset(),
    )


def _strings(p: JsonObject, key: str) -> list[str] | None:
    value = p.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise errors.InvalidParams(f'"{key}" must be a list of strings', param=key)
    return [str(v) for v in value]


def _ids(p: JsonObject, key: str) -> frozenset[str] | None:
    values = _strings(p, key)
    if values is None:
        return None
    if len(values) > MAX_IDS:
        raise errors.InvalidParams(f'"{key}" holds more than {MAX_IDS} ids', param=key)
    return frozenset(openvaala_id(v, key) for v in values)
