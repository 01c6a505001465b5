"""Markdown as Rich renderables that widgets draw themselves, rendered as seldom as possible."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import Markdown as RichMarkdown
from rich.markdown import UnknownElement
from rich.segment import Segment
from rich.text import Text

from openvaala_tui.markdown_blocks import BlockCutter, confirmed, has_link_definitions

Lines = list[list[Segment]]

# A finished block is rendered on its own once it is at least this long: each Rich Markdown costs
# ~0.45 ms to set up, so tiny blocks would cost more than they save; the unfinished rest, drawn
# again at every frame, stays around this size (a few ms to render) however long the reply.
MIN_BLOCK_CHARS: Final = 2000


class RenderedMarkdown:
    """Markdown text as a Rich renderable that renders once per width: Textual asks for the
    lines twice (to measure the height, then to draw), and again on every repaint."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._width = -1
        self._lines: Lines = []
        # Known once rendered (see `_spacing`): whether a blank line goes before a block that
        # follows this text (None: the text has no block), and whether this text's first block
        # takes one from the block above it.
        self.blank_after: bool | None = None
        self.takes_blank = False

    def lines(self, console: Console, options: ConsoleOptions) -> Lines:
        if options.max_width != self._width:
            self._width = options.max_width
            if self.text.strip():
                markdown = RichMarkdown(self.text)
                self.takes_blank, self.blank_after = _spacing(markdown)
                renderable: RichMarkdown | Text = markdown
            else:
                renderable = Text("")
            self._lines = console.render_lines(renderable, options.update(height=None), pad=False)
        return self._lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from _emit(self.lines(console, options))


class StreamedMarkdown:
    """Markdown text that grows (a streamed reply), rendered block by block: finished blocks
    (see `markdown_blocks`) once each, the unfinished rest at each `lines` call. Joined, they
    draw what the whole text rendered at once draws."""

    def __init__(self, text: str = "", *, min_block_chars: int = MIN_BLOCK_CHARS) -> None:
        self._min_block_chars = min_block_chars
        self._reset()
        self.set_text(text)

    def _reset(self) -> None:
        self.text = ""
        self._cutter = BlockCutter()
        self._finished: list[RenderedMarkdown] = []
        self._rest = RenderedMarkdown("")
        self._rest_start = 0  # offset of the unfinished rest in `text`
        self._whole = False  # link definitions: one block, since a cut could break a link
        self._links_checked = 0  # offset up to which `text` is known to define no link
        self._width = -1
        self._joined: Lines = []  # the finished blocks' lines at `_width`
        self._joined_count = 0  # how many finished blocks `_joined` holds
        self._joined_blank_after = False  # a blank line goes before what follows them

    def set_text(self, text: str) -> None:
        if not text.startswith(self.text):  # replaced, not grown: start over
            self._reset()
        self.text = text
        # Only the new part is searched (from the start of the last line, still incomplete).
        self._whole = self._whole or has_link_definitions(text[self._links_checked :])
        self._links_checked = text.rfind("\n") + 1
        if self._whole:
            self._finished, self._rest_start = [], 0
            self._joined, self._joined_count, self._joined_blank_after = [], 0, False
        elif cuts := self._cutter.feed(text):
            self._finish_blocks(text, cuts)
        rest = text[self._rest_start :]
        if rest != self._rest.text:
            self._rest = RenderedMarkdown(rest)

    def _finish_blocks(self, text: str, cuts: list[int]) -> None:
        """Take the cutter's candidate cuts that the Markdown parser confirms: those where a
        top-level block starts in the rest (the cutter is a quick line scan and does not know,
        say, an HTML block that runs across blank lines). The rest is small, so parsing it when
        a candidate comes up costs about a millisecond."""
        base = self._rest_start
        for relative in confirmed(text[base:], [cut - base for cut in cuts]):
            cut = base + relative
            if cut - self._rest_start >= self._min_block_chars:
                self._finished.append(RenderedMarkdown(text[self._rest_start : cut]))
                self._rest_start = cut

    def lines(self, console: Console, options: ConsoleOptions) -> Lines:
        if options.max_width != self._width:
            self._width, self._joined, self._joined_count = options.max_width, [], 0
            self._joined_blank_after = False
        for block in self._finished[self._joined_count :]:
            lines = block.lines(console, options)
            self._joined = _join(self._joined, self._joined_blank_after, block, lines)
            if block.blank_after is not None:
                self._joined_blank_after = block.blank_after
        self._joined_count = len(self._finished)
        rest = self._rest.lines(console, options)
        return _join(self._joined, self._joined_blank_after, self._rest, rest)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from _emit(self.lines(console, options))


def _spacing(markdown: RichMarkdown) -> tuple[bool, bool | None]:
    """How Rich spaces this text's blocks from a block above (`Markdown.__rich_console__`).

    Rich draws a blank line before a block when the last element it closed asked for one
    (`new_line`; a rule does not: it draws its own). For a block with elements inside (a list, a
    table, a quote, even an empty heading's inline), that last element is inside it, so the block
    above does not matter; for a paragraph, heading, code block or rule, it is the block above.
    Returns whether the first block takes its blank line from the block above, and what the last
    block asks of the next (None if the text has no block)."""
    tokens = markdown.parsed
    if not tokens:
        return False, None
    first_closed = next(
        (t for t in _flatten(tokens) if t.nesting != 1 and _is_element(markdown, t)), None
    )
    takes_blank = first_closed is not None and first_closed.level == 0
    last = tokens[-1]
    kind = last.type.removesuffix("_close") + "_open" if last.nesting == -1 else last.type
    return takes_blank, bool((markdown.elements.get(kind) or UnknownElement).new_line)


def _flatten(tokens: list[Token]) -> Iterator[Token]:
    """The tokens in the order Rich walks them (`Markdown._flatten_tokens`)."""
    for token in tokens:
        if token.children and not (token.type == "fence" or token.tag == "img"):
            yield from _flatten(token.children)
        else:
            yield token


def _is_element(markdown: RichMarkdown, token: Token) -> bool:
    """Whether Rich makes an element of `token` (and so updates its `new_line`)."""
    if token.type in _NOT_ELEMENTS:
        return False
    return not (token.tag in markdown.inlines and token.type not in ("fence", "code_block"))


_NOT_ELEMENTS: Final = frozenset(
    {"text", "hardbreak", "softbreak", "link_open", "link_close", "html_inline"}
)


def _join(above: Lines, blank: bool, below_source: RenderedMarkdown, below: Lines) -> Lines:
    """Rendered blocks one under the other, as Rich draws them in one document."""
    if blank and below_source.takes_blank:
        return [*above, [], *below]
    return [*above, *below]


def _emit(lines: Lines) -> RenderResult:
    newline = Segment.line()
    for line in lines:
        yield from line
        yield newline
