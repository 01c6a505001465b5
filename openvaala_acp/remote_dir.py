"""Where an ACP session starts when the daemon is on another machine (`openvaala acp --remote
HOST[:DIR]`; docs/design.md, "Gaps after issues 35, 37, 39 and 41").

`session/new` always carries the editor's own directory, a path of this machine. Over
`--remote` the daemon reads paths as its machine's, so that path is used only as the user said:
`HOST:DIR` names the project's directory there, and every new session starts in it; without a
DIR the editor's path is taken as it is (the same layout on both machines: a mirrored checkout,
a shared home), and where it does not exist there the session is refused with an error naming
`--remote HOST:DIR` — never started in the remote home or anywhere else the user did not name.

The editor's files and terminals are this machine's too: over `--remote` the agent does not
offer them to the daemon (its tools read and run on HOST, as for every other client)."""

from __future__ import annotations

from dataclasses import dataclass

from acp import RequestError

from openvaala_acp.link import DaemonLink

CWD_MISSING = "cwd_missing"  # the daemon's error kind for a directory it does not have


@dataclass(frozen=True)
class There:
    """The remote machine, as far as a session's directory goes."""

    destination: str  # `[user@]host`, as given to --remote
    host: str
    given: str | None  # DIR as the user wrote it in `HOST:DIR`
    directory: str | None  # that DIR resolved on the remote machine


async def remote_of(link: DaemonLink) -> There | None:
    """The remote machine the link dials, or None for a daemon on this one."""
    dialer = (await link.client()).dialer
    if dialer is None:
        return None
    remote = dialer.remote
    given = remote.directory
    resolved = dialer.resolve(given) if given else None
    return There(remote.destination, remote.host, given, resolved)


def session_directory(editor_cwd: str, there: There | None) -> str:
    """The directory a new session asks the daemon for."""
    if there is not None and there.directory is not None:
        return there.directory
    return editor_cwd


def filter_directory(editor_cwd: str | None, there: There | None) -> str | None:
    """`session/list`'s `cwd` as the daemon's conversations have it."""
    if editor_cwd is None:
        return None
    return session_directory(editor_cwd, there)


def explain_missing(exc: RequestError, editor_cwd: str, there: There | None) -> RequestError:
    """The daemon's `cwd_missing` said for a user of `--remote`: which machine lacks which
    directory, and what to name instead. Other errors pass unchanged."""
    data = exc.data if isinstance(exc.data, dict) else {}
    if there is None or data.get("kind") != CWD_MISSING:
        return exc
    if there.directory is not None:
        message = (
            f"the directory {there.directory} (`--remote {there.destination}:{there.given}`)"
            f" does not exist on {there.host}: create it there, or name another with"
            f" `--remote {there.destination}:DIR`"
        )
    else:
        message = (
            f"the editor's directory {editor_cwd} is a path of this machine and does not exist"
            f" on {there.host}, where the daemon runs: name the project's directory there with"
            f" `--remote {there.destination}:DIR` (relative to the home there, or absolute;"
            f" e.g. `openvaala acp --remote {there.destination}:~/project`)"
        )
    return RequestError(exc.code, message, {**data, "remote": there.host})
