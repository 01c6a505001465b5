"""Reusable test doubles. `FakeProvider` is a real local HTTP server speaking the OpenAI Chat,
Responses and Anthropic wire formats, scripted with `Reply`s; fixtures live in `fixtures.py`."""

from tests.fakes.providers import API_KEY_ENV, FakeProvider, RecordedRequest
from tests.fakes.script import Gate, Reply
from tests.fakes.wire import ANTHROPIC, CHAT, RESPONSES

__all__ = [
    "ANTHROPIC",
    "API_KEY_ENV",
    "CHAT",
    "RESPONSES",
    "FakeProvider",
    "Gate",
    "RecordedRequest",
    "Reply",
]
