"""Codex `UserInput`s as what OpenVaala's `input/send` takes (pure; docs/codex.md "Methods").

Text parts are joined; an `image` (a data URL) is an OpenVaala image as is; a `localImage` names a
file the daemon reads (`UserMessage.paths`, read at the edge); a `skill` or a `mention` becomes a
link in the text. Anything else has no OpenVaala equivalent and is refused, naming its type."""

from __future__ import annotations

from dataclasses import dataclass, field

from openvaala_server import errors
from openvaala_server.protocol.json_types import JsonObject, JsonValue


@dataclass
class UserMessage:
    text: str
    images: list[JsonObject] = field(default_factory=list)  # `input/send` images: {data}
    paths: list[str] = field(default_factory=list)  # local images still to read


def user_message(value: JsonValue) -> UserMessage:
    if not isinstance(value, list) or not value:
        raise errors.InvalidParams('"input" must be a non-empty list of UserInput', param="input")
    texts: list[str] = []
    message = UserMessage("")
    for part in value:
        part = part if isinstance(part, dict) else {}
        kind = part.get("type")
        if kind == "text":
            texts.append(str(part.get("text", "")))
        elif kind == "image" and isinstance(part.get("url"), str):
            message.images.append({"data": part["url"]})
        elif kind == "localImage" and isinstance(part.get("path"), str):
            message.paths.append(str(part["path"]))
        elif kind in ("skill", "mention"):
            texts.append(f"[{part.get('name')}]({part.get('path')})")
        else:
            raise errors.InvalidParams(
                f"input of type {kind!r} is not supported by OpenVaala (text, image, localImage,"
                " skill, mention)",
                param="input",
            )
    message.text = "\n".join(t for t in texts if t)
    return message
