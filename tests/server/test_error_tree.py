"""One error tree (openvaala_server/errors.py): every protocol error and every store error is
declared there, and a store failure is mapped to its protocol kind in one place."""

from __future__ import annotations

import sqlite3

from openvaala_server import errors
from openvaala_server.store.journal import JournalWriteError
from openvaala_server.store.lock import LockHeld
from openvaala_server.store.paths import CorruptConversation, InvalidId


def _protocol_errors() -> list[type[errors.OpenVaalaError]]:
    found: list[type[errors.OpenVaalaError]] = []
    todo: list[type[errors.OpenVaalaError]] = [errors.OpenVaalaError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_protocol_error_is_declared_in_errors_with_its_own_code_and_kind() -> None:
    classes = _protocol_errors()
    assert {c.__module__ for c in classes} == {"openvaala_server.errors"}
    assert len({c.code for c in classes}) == len(classes)
    assert len({c.kind for c in classes}) == len(classes)
    assert {"compaction_failed", "pin_refused", "storage_failed"} <= {c.kind for c in classes}
    tree = errors.__doc__ or ""
    assert all(c.__name__ in tree for c in classes), "the docstring's tree lists every error"


def test_the_store_errors_hang_from_the_one_store_error() -> None:
    for cls in (InvalidId, CorruptConversation, JournalWriteError, LockHeld):
        assert issubclass(cls, errors.StoreError)


def test_a_store_failure_is_told_as_storage_failed_and_a_bug_is_not() -> None:
    cases: list[Exception] = [
        CorruptConversation("metadata.jsonl is empty"),
        OSError(28, "No space left on device"),
        sqlite3.OperationalError("database is locked"),
    ]
    for exc in cases:
        failure = errors.storage_failure(exc)
        assert isinstance(failure, errors.StorageFailed)
        assert failure.to_wire()["data"]["kind"] == "storage_failed"
    assert "No space left on device" in str(errors.storage_failure(cases[1]))
    assert errors.storage_failure(KeyError("itemId")) is None
