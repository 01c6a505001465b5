"""The survey of a conversation's working directory, once per load, before its first whole-tree
snapshot: is the directory small enough to snapshot around `shell` calls? (docs/storage.md,
"Checkpoints"; the walk is store/survey.py.)

The survey runs as a job of the runtime, so that a `shell` call waits for it only so long
(`[checkpoints] survey_wait_s`): past that the call runs uncaptured and says so, and the survey
goes on to decide for the calls after it (docs/design.md, "A survey that stops at its cap").
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable

import anyio

from openvaala_server.store.checkpoints import SnapshotStore
from openvaala_server.structured import Job, Supervisor


class SurveyState(enum.Enum):
    NOT_STARTED = "not started"
    RUNNING = "running"
    SMALL = "small"  # whole-tree snapshots may be taken
    TOO_LARGE = "too large"  # `shell` calls are not captured while the conversation is loaded


class Survey:
    def __init__(self, too_large: Callable[[str], None]) -> None:
        self.state = SurveyState.NOT_STARTED
        self._too_large = too_large  # told why, once, when the survey says so
        self._job: Job[None] | None = None

    async def outcome(
        self,
        store: SnapshotStore,
        limits: tuple[int, int],
        tasks: Supervisor,
        wait_s: float | None,
    ) -> SurveyState:
        """The survey's state after waiting for it at most `wait_s` (None: until it is done),
        started first if it was not. `limits`: (max files, max bytes)."""
        if self.state is SurveyState.NOT_STARTED:
            self.state = SurveyState.RUNNING
            run = self._run(store, limits)
            if not tasks.running:  # no runtime around it (a unit test): surveyed here
                try:
                    await run()
                finally:
                    if self.state is SurveyState.RUNNING:  # cancelled: the next call starts again
                        self.state = SurveyState.NOT_STARTED
                return self.state
            self._job = tasks.start_job(run, f"survey-{store.work_tree}")
        if self.state is SurveyState.RUNNING and self._job is not None:
            # Only this wait ends with the deadline: the survey goes on under the runtime.
            with anyio.move_on_after(wait_s):
                await self._job.wait()
        return self.state

    def _run(self, store: SnapshotStore, limits: tuple[int, int]) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            try:
                why = await store.survey(*limits)
            except Exception as exc:  # a failed walk must not leave the calls waiting for it
                why = f"the survey of {store.work_tree} failed: {exc}"
            self.state = SurveyState.SMALL if why is None else SurveyState.TOO_LARGE
            if why is not None:
                self._too_large(why)

        return run
