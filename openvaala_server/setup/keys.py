"""An API key kept in a file of the config directory, readable by its owner only
(docs/security.md, "API keys")."""

from __future__ import annotations

import os
from pathlib import Path

KEYS_DIR = "keys"


def store_key(config_dir: Path, name: str, secret: str) -> str:
    """Write `secret` to `keys/<name>.key` (0600, its directory 0700); the path relative to
    `config_dir`, as `api_key_file` names it."""
    folder = config_dir / KEYS_DIR
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    relative = f"{KEYS_DIR}/{name}.key"
    path = config_dir / relative
    # Created with its final mode: the key is never readable by others, not even for a moment.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secret.strip() + "\n")
    os.chmod(path, 0o600)  # an existing file keeps its old mode through O_CREAT
    return relative
