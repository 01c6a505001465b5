"""`structured.Supervisor` on its own (docs/design.md, "Structured concurrency"): leaving it
cancels and waits for what still runs, an activity's failure stays with that activity, and the
owner's own exception comes out as itself."""

from __future__ import annotations

from functools import partial

import anyio
import pytest

from openvaala_server.structured import Activity, Supervisor


async def test_leaving_cancels_and_waits_for_every_activity() -> None:
    cleaned: list[str] = []
    started = {n: anyio.Event() for n in ("a", "b")}

    async def forever(name: str) -> None:
        try:
            started[name].set()
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.01)  # cleanup that awaits still runs to its end
            cleaned.append(name)

    async with Supervisor("test") as tasks:
        activities = [tasks.spawn(partial(forever, n), n) for n in ("a", "b")]
        with anyio.fail_after(5):  # both are inside their `try` before the owner leaves
            for event in started.values():
                await event.wait()
        assert {a.name for a in tasks.activities} == {"a", "b"}
    assert sorted(cleaned) == ["a", "b"]
    assert all(a.finished for a in activities)
    assert not tasks.activities and not tasks.running


async def test_a_failing_activity_is_kept_and_the_others_run_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def fail() -> None:
        raise ValueError("boom")

    async with Supervisor("test") as tasks:
        other = tasks.spawn(anyio.sleep_forever, "other")
        failed = tasks.spawn(fail, "failing")
        with anyio.fail_after(5):
            await failed.wait()
        assert isinstance(failed.error, ValueError)
        assert not other.finished  # one failure cancels nothing else
        other.cancel()  # an interrupt: its own scope only
        with anyio.fail_after(5):
            await other.wait()
        assert other.cancelled and other.error is None
    assert "failing failed" in caplog.text


async def test_the_owners_exception_comes_out_as_itself() -> None:
    with pytest.raises(KeyError):
        async with Supervisor("test") as tasks:
            tasks.spawn(anyio.sleep_forever, "idle")
            raise KeyError("owner")


async def test_wait_all_is_bounded_and_spawning_needs_a_running_supervisor() -> None:
    tasks = Supervisor("test")
    with pytest.raises(RuntimeError, match="not running"):
        tasks.spawn(anyio.sleep_forever, "early")
    async with tasks:
        stuck: Activity = tasks.spawn(anyio.sleep_forever, "stuck")
        assert not await tasks.wait_all(0.05)
        stuck.cancel()
        assert await tasks.wait_all(5)
