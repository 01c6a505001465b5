"""`apply_patch` when an editor holds the conversation's files (docs/design.md, "Files held by an
editor"): the files the patch names inside the working directory are read from the editor (its
unsaved buffers) and the new texts are written there, every new content being computed first as
on disk (tools/patch.py). ACP editors cannot delete or rename a buffer, so a deleted file, and
the old path of a move, are removed on disk. Should a write fail, what was written already gets
its old text back, as on disk.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from openvaala_server.domain.diffs import bounded
from openvaala_server.domain.patch import PatchError
from openvaala_server.domain.permissions import Confinement
from openvaala_server.domain.proposed import ProposedDiff
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.tools import guard
from openvaala_server.tools.base import (
    FileHost,
    HeldChange,
    HostFailed,
    ToolContext,
    ToolResult,
    truncate_output,
)
from openvaala_server.tools.files import ToolArgumentError, ToolFailure
from openvaala_server.tools.hosted_files import current_text, held
from openvaala_server.tools.patch import ApplyPatchTool, plan_patch, put, summary, targets
from openvaala_server.tools.previews import patch_changes
from openvaala_server.tools.threads import run_in_own_thread

T = TypeVar("T")


class HostedApplyPatch(ApplyPatchTool):
    async def held_preview(
        self, arguments: JsonObject, cwd: Path, confinement: Confinement, files: FileHost
    ) -> list[ProposedDiff] | None:
        """The approval's diffs from the editor's text of the files it holds."""
        reading = replace(confinement, mode="off", approved=None)  # as tools/previews.py
        ctx = ToolContext(cwd=cwd, emit_output=lambda _: None, confinement=reading)
        try:
            known = await _known(files, arguments, ctx)
        except (ToolArgumentError, ToolFailure, PatchError, guard.Refused, HostFailed, OSError):
            return []
        if not known:
            return None
        return await _in_thread(lambda: patch_changes(arguments, cwd, confinement, known))

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        files = ctx.files
        if files is None:
            return await super().run(arguments, ctx)
        try:
            return await _apply(files, arguments, ctx)
        except (ToolArgumentError, ToolFailure, PatchError, guard.Refused) as exc:
            return ToolResult(f"apply_patch: {exc}\nNothing was changed.", is_error=True)
        except HostFailed as exc:
            return ToolResult(f"apply_patch: the editor failed: {exc}", is_error=True)
        except OSError as exc:
            where = f": {exc.filename}" if exc.filename else ""
            detail = exc.strerror or str(exc)
            return ToolResult(f"apply_patch: {detail}{where}\nNothing was changed.", is_error=True)


async def _in_thread(work: Callable[[], T]) -> T:
    return await run_in_own_thread(work, name="openvaala-patch")


async def _texts(
    files: FileHost, arguments: JsonObject, ctx: ToolContext
) -> dict[Path, str | None]:
    """The editor's text of each file the patch names that it holds (None: no such file)."""
    paths = await _in_thread(lambda: [p for p in targets(arguments, ctx) if held(files, p)])
    return {path: await current_text(files, path) for path in paths}


async def _known(
    files: FileHost, arguments: JsonObject, ctx: ToolContext
) -> dict[Path, bytes | None]:
    texts = await _texts(files, arguments, ctx)
    return {p: None if t is None else t.encode("utf-8") for p, t in texts.items()}


async def _apply(files: FileHost, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
    texts = await _texts(files, arguments, ctx)
    known = {p: None if t is None else t.encode("utf-8") for p, t in texts.items()}
    plan = await _in_thread(lambda: plan_patch(arguments, ctx, known))
    done: list[Path] = []
    try:
        for path, content in plan.after.items():
            if content != plan.before.get(path):
                await _put(files, path, content, path in texts, ctx)
            done.append(path)
    except BaseException:
        for path in reversed(done):  # put back what was written, newest first
            with contextlib.suppress(OSError, guard.Refused, ToolFailure, HostFailed):
                await _put(files, path, plan.before.get(path), path in texts, ctx)
        raise
    text, changes = summary(plan)
    text, truncated = truncate_output(text, ctx.output_limit)
    in_editor = tuple(
        HeldChange(path, texts[path], after.decode("utf-8"))
        for path, after in plan.after.items()
        if path in texts and after is not None and after != plan.before.get(path)
    )
    return ToolResult(text, truncated=truncated, changes=tuple(bounded(changes)), held=in_editor)


async def _put(
    files: FileHost, path: Path, content: bytes | None, in_editor: bool, ctx: ToolContext
) -> None:
    if in_editor and content is not None:
        await files.write(path, content.decode("utf-8"))
    else:
        await _in_thread(lambda: put(path, content, ctx))
