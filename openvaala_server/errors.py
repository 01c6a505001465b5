"""The errors a client can be told about, each with a JSON-RPC code and a stable `data.kind`.

    OpenVaalaError                 -32000  error
    ├── ParseError                 -32700  parse_error
    ├── InvalidRequest             -32600  invalid_request
    ├── MethodNotFound             -32601  method_not_found
    ├── InvalidParams              -32602  invalid_params
    ├── NotFound                   -32001  not_found
    ├── TurnRunning                -32002  turn_running
    ├── Busy                       -32003  busy
    ├── CwdMissing                 -32004  cwd_missing
    ├── ModelMissing               -32005  model_missing
    ├── NotIdle                    -32006  not_idle
    ├── InputConsumed              -32007  input_consumed
    ├── NotInitialized             -32008  not_initialized
    ├── NotAvailable               -32009  not_available   (a method a later version adds)
    ├── StorageFailed              -32010  storage_failed  (disk full, I/O error: nothing was lost)
    ├── ConversationUnreadable     -32011  unreadable      (newer format, broken metadata)
    ├── CompactionFailed           -32012  compaction_failed (the summary call failed)
    ├── AlreadyResolved            -32013  already_resolved (an approval another answer settled)
    ├── AgentMissing               -32014  agent_missing   (the agent is not configured)
    ├── PinRefused                 -32021  pin_refused     (the pins would not fit the context)
    ├── FilesConflict              -32030  files_conflict  (a restore would overwrite user edits)
    ├── BundleInvalid              -32031  bundle_invalid  (an import refused; nothing written)
    └── ImportConflict             -32032  import_conflict (the bundle's conversations exist here)

    StoreError                             (internal: the data directory; `storage_failure`
    ├── InvalidId, NotFound, …                maps it to storage_failed; store/paths.py)
    └── LockHeld, JournalWriteError        (store/lock.py, store/journal.py)

A failure below the protocol is mapped to a kind in one place: a store call's (`StoreError`,
`OSError`, `sqlite3.Error`) by `storage_failure`, which `ConversationManager.store_call` applies
to every store operation; a model call's `ModelError` carries its kind itself
(models/base.py) and a turn fails with it (runtime/turn.py, docs/protocol.md "Errors").

Messages are written for a person; they never carry a stack trace or a secret.
"""

from __future__ import annotations

import sqlite3
from typing import ClassVar, TypedDict


class WireError(TypedDict):
    """A JSON-RPC error object as this server sends it (docs/protocol.md "Errors")."""

    code: int
    message: str
    data: dict[str, object]


class OpenVaalaError(Exception):
    code: ClassVar[int] = -32000
    kind: ClassVar[str] = "error"

    def __init__(self, message: str, **data: object) -> None:
        super().__init__(message)
        self.message = message
        self.data = data  # more for a program: which parameter, which models exist, …

    def to_wire(self) -> WireError:
        return {
            "code": self.code,
            "message": self.message,
            "data": {"kind": self.kind, **self.data},
        }


class ParseError(OpenVaalaError):
    code, kind = -32700, "parse_error"


class InvalidRequest(OpenVaalaError):
    code, kind = -32600, "invalid_request"


class MethodNotFound(OpenVaalaError):
    code, kind = -32601, "method_not_found"


class InvalidParams(OpenVaalaError):
    code, kind = -32602, "invalid_params"


class NotFound(OpenVaalaError):
    code, kind = -32001, "not_found"


class TurnRunning(OpenVaalaError):
    code, kind = -32002, "turn_running"


class Busy(OpenVaalaError):
    code, kind = -32003, "busy"


class CwdMissing(OpenVaalaError):
    code, kind = -32004, "cwd_missing"


class ModelMissing(OpenVaalaError):
    code, kind = -32005, "model_missing"


class NotIdle(OpenVaalaError):
    code, kind = -32006, "not_idle"


class InputConsumed(OpenVaalaError):
    code, kind = -32007, "input_consumed"


class NotInitialized(OpenVaalaError):
    code, kind = -32008, "not_initialized"


class NotAvailable(OpenVaalaError):
    code, kind = -32009, "not_available"


class StorageFailed(OpenVaalaError):
    code, kind = -32010, "storage_failed"


class ConversationUnreadable(OpenVaalaError):
    code, kind = -32011, "unreadable"


class CompactionFailed(OpenVaalaError):
    code, kind = -32012, "compaction_failed"


class AlreadyResolved(OpenVaalaError):
    code, kind = -32013, "already_resolved"


class AgentMissing(OpenVaalaError):
    code, kind = -32014, "agent_missing"


class PinRefused(OpenVaalaError):
    code, kind = -32021, "pin_refused"


class FilesConflict(OpenVaalaError):
    code, kind = -32030, "files_conflict"


class BundleInvalid(OpenVaalaError):
    code, kind = -32031, "bundle_invalid"


class ImportConflict(OpenVaalaError):
    code, kind = -32032, "import_conflict"


# -- below the protocol -----------------------------------------------------------------------


class StoreError(Exception):
    """Base of every error the store raises on purpose (store/*). Not a protocol error itself:
    the CLI prints it, and a client is told `storage_failure(exc)`."""


def storage_failure(exc: Exception) -> StorageFailed | None:
    """What a client is told when a store operation raised `exc`; None when `exc` is not a
    storage failure (a bug, or a protocol error already)."""
    if isinstance(exc, OSError):
        return StorageFailed(f"could not write to the data directory: {exc.strerror or exc}")
    if isinstance(exc, sqlite3.Error):
        return StorageFailed(f"the conversation index failed: {exc}")
    if isinstance(exc, StoreError):
        return StorageFailed(f"storage failed: {exc}")
    return None
