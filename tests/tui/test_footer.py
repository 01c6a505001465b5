"""The key footer is rebuilt only when the keys it shows change (issue 21, start-up time):
Textual's own rebuilds it at every recomputation of the bindings, several times while the app
starts, and that restyling was the largest part of drawing the first screen."""

from __future__ import annotations

from pytest import MonkeyPatch
from textual.widgets._footer import FooterKey

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.footer import QuietFooter
from openvaala_tui.widgets.inbox import InboxList
from tests.tui import fixed


def shown(app: VaalaApp) -> list[str]:
    return [str(key.description) for key in app.query_one(QuietFooter).query(FooterKey)]


async def test_the_footer_is_rebuilt_only_when_its_keys_change() -> None:
    app = VaalaApp(cwd="/tmp", snapshot=fixed.snapshot())
    rebuilt = 0
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        footer = app.query_one(QuietFooter)
        original = footer.recompose

        async def counting() -> None:
            nonlocal rebuilt
            rebuilt += 1
            await original()

        footer.recompose = counting  # type: ignore[method-assign]
        assert "Send" in shown(app) and "Interrupt" in shown(app)
        for _ in range(5):  # recomputed, the same keys: nothing rebuilt
            app.refresh_bindings()
            await pilot.pause()
        assert rebuilt == 0
        app.query_one(InboxList).focus()  # other keys: rebuilt, and shown
        await pilot.pause()
        await pilot.pause()
        assert rebuilt == 1
        assert "Withdraw" in shown(app) and "Send" not in shown(app)
        app.composer.focus()
        await pilot.pause()
        await pilot.pause()
        assert rebuilt == 2 and "Send" in shown(app)


async def test_keys_that_change_twice_before_the_rebuild_rebuild_it_once(
    monkeypatch: MonkeyPatch,
) -> None:
    """A rebuild composes the keys of when it runs: a second change before then asks for none
    (in a terminal, focus moves from the transcript to the composer that way as the app starts;
    docs/design.md, "Start-up time")."""
    built = 0
    original = QuietFooter.recompose

    async def counting(footer: QuietFooter) -> None:
        nonlocal built
        built += 1
        await original(footer)

    app = VaalaApp(cwd="/tmp", snapshot=fixed.snapshot())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        monkeypatch.setattr(QuietFooter, "recompose", counting)
        footer = app.query_one(QuietFooter)

        def change_twice() -> None:  # in the footer's own message loop, as Textual calls it
            app.screen.set_focus(app.query_one(InboxList))
            footer.bindings_changed(app.screen)  # other keys: a rebuild is asked for
            app.screen.set_focus(app.composer)
            footer.bindings_changed(app.screen)  # and changed again before it ran

        footer.call_later(change_twice)
        await pilot.pause()
        await pilot.pause()
        assert built == 1
        assert "Send" in shown(app) and "Withdraw" not in shown(app)
