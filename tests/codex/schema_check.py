"""Every message the daemon sends a Codex client, checked against the schema the pinned Codex
release generated (openvaala_server/codex/schema/): notifications against their method's
branch of `ServerNotification`, server requests against `ServerRequest`, responses against the
method's `…Response` type, errors against `JSONRPCError`."""

from __future__ import annotations

import functools
import json
from typing import Any

from jsonschema import Draft7Validator

from openvaala_server.codex.schema import SCHEMA_PATH

# The response type of each method the bridge answers (the schema names them by convention).
RESPONSES = {
    "initialize": "InitializeResponse",
    "model/list": "v2/ModelListResponse",
    "collaborationMode/list": "v2/CollaborationModeListResponse",
    "config/read": "v2/ConfigReadResponse",
    "configRequirements/read": "v2/ConfigRequirementsReadResponse",
    "account/read": "v2/GetAccountResponse",
    "account/bedrock/checkGovCloudRequirements": "v2/BedrockCheckGovCloudRequirementsResponse",
    "account/rateLimits/read": "v2/GetAccountRateLimitsResponse",
    "mcpServerStatus/list": "v2/ListMcpServerStatusResponse",
    "skills/list": "v2/SkillsListResponse",
    "hooks/list": "v2/HooksListResponse",
    "app/list": "v2/AppsListResponse",
    "thread/backgroundTerminals/list": "v2/ThreadBackgroundTerminalsListResponse",
    "plugin/installed": "v2/PluginInstalledResponse",
    "plugin/list": "v2/PluginListResponse",
    "experimentalFeature/list": "v2/ExperimentalFeatureListResponse",
    "thread/start": "v2/ThreadStartResponse",
    "thread/resume": "v2/ThreadResumeResponse",
    "thread/read": "v2/ThreadReadResponse",
    "thread/list": "v2/ThreadListResponse",
    "thread/turns/list": "v2/ThreadTurnsListResponse",
    "thread/loaded/list": "v2/ThreadLoadedListResponse",
    "thread/archive": "v2/ThreadArchiveResponse",
    "thread/unarchive": "v2/ThreadUnarchiveResponse",
    "thread/name/set": "v2/ThreadSetNameResponse",
    "thread/fork": "v2/ThreadForkResponse",
    "thread/revert": "v2/ThreadRevertResponse",
    # Not in 0.171.0's schema (an older Codex's): answered with thread/revert's shape.
    "thread/rollback": "v2/ThreadRevertResponse",
    "thread/unsubscribe": "v2/ThreadUnsubscribeResponse",
    "thread/compact/start": "v2/ThreadCompactStartResponse",
    "thread/settings/update": "v2/ThreadSettingsUpdateResponse",
    "turn/start": "v2/TurnStartResponse",
    "turn/steer": "v2/TurnSteerResponse",
    "turn/interrupt": "v2/TurnInterruptResponse",
}


@functools.cache
def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())
    return schema


def _validator(ref: str) -> Draft7Validator:
    return Draft7Validator(
        {"$ref": f"#/definitions/{ref}", "definitions": _schema()["definitions"]}
    )


@functools.cache
def _branch(union: str, method: str) -> Draft7Validator:
    for index, branch in enumerate(_schema()["definitions"][union]["oneOf"]):
        if branch["properties"]["method"]["enum"] == [method]:
            return _validator(f"{union}/oneOf/{index}")
    raise AssertionError(f"{method!r} is not a {union} of Codex's schema")


@functools.cache
def _response(method: str) -> Draft7Validator:
    return _validator(RESPONSES[method])


def _check(validator: Draft7Validator, value: object, what: str) -> None:
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
    if errors:
        details = "; ".join(f"{list(e.path)}: {e.message[:300]}" for e in errors[:5])
        raise AssertionError(f"{what} does not match Codex's schema: {details}\n{value}")


def check_notification(message: dict[str, Any]) -> None:
    _check(_branch("ServerNotification", message["method"]), message, message["method"])


def check_server_request(message: dict[str, Any]) -> None:
    _check(_branch("ServerRequest", message["method"]), message, message["method"])


def check_client_request(message: dict[str, Any]) -> None:
    _check(_branch("ClientRequest", message["method"]), message, message["method"])


def check_response(method: str, result: object) -> None:
    _check(_response(method), result, f"the result of {method}")


def check_error(message: dict[str, Any]) -> None:
    _check(_validator("JSONRPCError"), message, "an error answer")
