"""The free-shaped JSON names (domain/json_types.py), under the name the wire layer's users know.

They live in `domain` because its records use them and the pure core imports nothing above it;
this module keeps every `protocol.json_types` import working.
"""

from __future__ import annotations

from openvaala_server.domain.json_types import JsonMapping as JsonMapping
from openvaala_server.domain.json_types import JsonObject as JsonObject
from openvaala_server.domain.json_types import JsonValue as JsonValue
