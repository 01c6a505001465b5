"""A fetched page as text the model reads: HTML reduced to Markdown (markdownify, on a
BeautifulSoup tree without scripts, styles and other non-content), other text as it is."""

from __future__ import annotations

import re
from typing import Final

from bs4 import BeautifulSoup
from markdownify import MarkdownConverter

# Elements with nothing a reader sees as content.
_DROPPED: Final = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "head")
_BLANK_LINES = re.compile(r"\n{3,}")
_HTML_TYPES: Final = ("text/html", "application/xhtml+xml")
_TEXT_TYPES: Final = ("application/json", "application/xml", "application/javascript")


def is_html(content_type: str) -> bool:
    return content_type in _HTML_TYPES


def is_text(content_type: str) -> bool:
    return content_type.startswith("text/") or content_type in _TEXT_TYPES or content_type == ""


def html_to_markdown(html: str) -> str:
    """The page's title as a heading, then its body as Markdown."""
    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(strip=True) if soup.title else ""
    for element in soup(list(_DROPPED)):
        element.decompose()
    body = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    text = _BLANK_LINES.sub("\n\n", body).strip()
    return f"# {title}\n\n{text}" if title else text
