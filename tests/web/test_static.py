"""The static files themselves: where they are, and that they fit the daemon's CSP."""

from __future__ import annotations

import re

from openvaala_web import static_dir


def test_static_dir_holds_the_app() -> None:
    root = static_dir()
    names = ("index.html", "app.css", "js/app.js", "vendor/marked.esm.js", "vendor/purify.es.mjs")
    for name in names:
        assert (root / name).is_file(), name
    for licence in ("LICENSE.marked", "LICENSE.dompurify"):
        assert (root / "vendor" / licence).is_file()


def test_no_inline_script_style_or_handler() -> None:
    root = static_dir()
    html = (root / "index.html").read_text()
    assert re.search(r"<script(?![^>]*\bsrc=)", html) is None
    assert "<style" not in html
    assert re.search(r"\sstyle=", html) is None
    assert re.search(r"\son[a-z]+=", html) is None
    for src in re.findall(r'(?:src|href)="([^"]+)"', html):
        assert src.startswith(("static/", "data:", "#")), src  # "#": in-page (skip link)
    for js in (root / "js").glob("*.js"):
        text = js.read_text()
        assert "innerHTML" not in text, js.name
        assert "eval(" not in text and "new Function" not in text, js.name
        assert re.search(r"\bimport\s.*from\s+\"https?:", text) is None, js.name


def test_vendor_versions_are_recorded() -> None:
    readme = (static_dir() / "vendor" / "README.md").read_text()
    assert "marked | 18.2.1" in readme
    assert "dompurify | 3.5.0" in readme
