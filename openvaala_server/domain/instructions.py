"""The system prompt of a request, in labelled parts (docs/design.md, "What the model is told").

In order: the base prompt, the agent's `instructions`, the environment block, the user's own
AGENTS.md, the project's AGENTS.md files from the repository root down to the working directory
(nearest last), then memory (the user's, the project's). Each part's text carries its separator
from the one before, so the parts joined are exactly the request's instructions and the context
cockpit can show them as they are sent. Pure: the files are read by runtime/surroundings.py.

The instruction files share one cap (`project_doc_max_chars`). It is spent nearest first — the
nearest file is the most specific — so a file past it is cut (or left out) with a notice the
model and the cockpit both see. A memory file keeps its newest lines when over `MEMORY_MAX_CHARS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from openvaala_server.domain.trace import InstructionKind, InstructionPart

MEMORY_MAX_CHARS = 8_000
SEPARATOR = "\n\n"


@dataclass(frozen=True)
class Doc:
    """A file whose text the model is given, read when the session's turn started."""

    path: str
    text: str


@dataclass(frozen=True)
class Memory:
    scope: Literal["user", "project"]
    path: str
    text: str


def cap_docs(docs: Sequence[Doc], max_chars: int) -> list[tuple[Doc, int]]:
    """Each doc with the number of characters cut from its end to keep the total within
    `max_chars`, spending the budget from the last (nearest) doc back."""
    left = max_chars
    cut: list[int] = []
    for doc in reversed(docs):
        keep = min(len(doc.text), max(left, 0))
        cut.append(len(doc.text) - keep)
        left -= keep
    return list(zip(docs, reversed(cut), strict=True))


def _doc_body(doc: Doc, cut: int, max_chars: int) -> str:
    kept = doc.text[: len(doc.text) - cut]
    body = f"Instructions from {doc.path}:\n{kept}".rstrip()
    if cut:
        whole = "left out" if not kept.strip() else f"cut after {len(kept)} characters"
        body += (
            f"\n[… {whole}: {cut} characters over the {max_chars}-character cap on "
            "instruction files (project_doc_max_chars) …]"
        )
    return body


def _memory_body(memory: Memory) -> str:
    text = memory.text.strip()
    head = f"Memory ({memory.scope}, {memory.path}): notes the user asked you to keep."
    if len(text) > MEMORY_MAX_CHARS:
        dropped = len(text) - MEMORY_MAX_CHARS
        text = f"[… the oldest {dropped} characters left out …]\n" + text[dropped:]
    return f"{head}\n{text}"


def assemble(
    base: tuple[str, str],
    agent: tuple[str, str],
    environment: str,
    user_doc: Doc | None,
    project_docs: Sequence[Doc],
    memories: Sequence[Memory],
    max_chars: int,
) -> list[InstructionPart]:
    """The parts in request order. `base` and `agent` are (label, text); an empty text leaves
    its part out."""
    pieces: list[tuple[InstructionKind, str, str]] = [
        ("base", base[0], base[1].strip()),
        ("system", agent[0], agent[1].strip()),
        ("environment", "Environment", environment),
    ]
    docs = [*([user_doc] if user_doc is not None else []), *project_docs]
    for doc, cut in cap_docs(docs, max_chars):
        kind: InstructionKind = "user_md" if doc is user_doc else "agents_md"
        who = "User instructions" if doc is user_doc else "Project instructions"
        label = f"{who}: {doc.path}" + (" (cut)" if cut else "")
        pieces.append((kind, label, _doc_body(doc, cut, max_chars)))
    for memory in memories:
        if memory.text.strip():
            label = f"Memory ({memory.scope}): {memory.path}"
            pieces.append(("memory", label, _memory_body(memory)))
    parts: list[InstructionPart] = []
    for kind, label, text in pieces:
        if text:
            parts.append(InstructionPart(kind, label, (SEPARATOR if parts else "") + text))
    return parts
