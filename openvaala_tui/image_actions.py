"""`/image PATH` and image paths in a message: the app's side of openvaala_tui/images.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openvaala_server.domain import images as img
from openvaala_server.domain.images import Image
from openvaala_tui import images as tui_images
from openvaala_tui.actions import CommandsMixin

if TYPE_CHECKING:
    from openvaala_server.protocol.json_types import JsonObject


class ImagesMixin(CommandsMixin):
    """Images waiting for the next message, attached by `/image` or a pasted path."""

    _pending_images: tui_images.PendingImages | None = None

    @property
    def pending_images(self) -> tui_images.PendingImages:
        if self._pending_images is None:
            self._pending_images = tui_images.PendingImages()
        return self._pending_images

    def _images_cwd(self) -> str:
        return str(self.view.conversation.get("cwd") or self.cwd)

    async def _attach_images(self, loaded: tui_images.Loaded) -> None:
        for problem in loaded.problems + self.pending_images.add(loaded.images):
            self.notify(problem, severity="warning")
        if loaded.images:
            names = ", ".join(tui_images.describe(i) for i in loaded.images)
            await self.local_notice(f"Image attached: {names}. It goes with your next message.")

    async def cmd_image(self, arg: str) -> None:
        """`/image PATH…` attaches images to the next message; `/image` lists them,
        `/image clear` drops them."""
        if arg.strip() == "clear":
            self.pending_images.take()
            await self.local_notice("No image waits for the next message now.")
            return
        if not arg.strip():
            waiting = self.pending_images.waiting
            listed = ", ".join(tui_images.describe(i) for i in waiting) or "none"
            await self.local_notice(
                f"Images for the next message: {listed}. /image PATH attaches one (or paste its "
                "path); /image clear drops them."
            )
            return
        words = tui_images.words(arg) or [arg]
        await self._attach_images(tui_images.load_all(words, self._images_cwd()))

    async def images_for(self, text: str) -> list[Image] | None:
        """The images to send with `text`: those waiting, and those its image paths name.
        None when `text` was only image paths: they now wait, and nothing is sent."""
        cwd = self._images_cwd()
        found = tui_images.image_paths(text, cwd)
        if found:
            loaded = tui_images.load_all(found, cwd)
            if tui_images.only_paths(text, found):
                await self._attach_images(loaded)
                return None
            for problem in loaded.problems + self.pending_images.add(loaded.images):
                self.notify(problem, severity="warning")
        return self.pending_images.take()

    def image_params(self, images: list[Image]) -> list[JsonObject]:
        return [tui_images.to_param(i) for i in images]

    def images_back(self, images: list[Image]) -> None:
        """A send that failed: its images wait again."""
        self.pending_images.add(images)

    async def withdrawn_images(self, refs: object) -> None:
        """A withdrawn message's images (`[ImageRef]`) wait again for the next message."""
        if self.client is None:
            return
        import httpx  # only here: its import (click, pygments) would slow every start (#21)

        loaded = tui_images.Loaded()
        for ref in img.refs_of(refs):
            name = ref.get("name")
            try:
                data = await self.client.attachment(self.view.conversation_id, ref["sha256"])
                loaded.images.append(img.check(data, what=name or "an image", name=name))
            except (httpx.HTTPError, img.ImageError) as exc:
                loaded.problems.append(f"{name or 'an image'} could not be put back: {exc}")
        await self._attach_images(loaded)
