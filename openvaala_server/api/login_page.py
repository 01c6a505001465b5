"""The private sign-in file `openvaala web` opens in the browser (docs/security.md, "The browser").

Jupyter's approach: the one-time code goes into a file only the user can read (mode 0600, in a
0700 directory of the data directory), and the browser is started on that file's path. Any local
user can read a browser's command line (`/proc/*/cmdline`); what they find there is a path they
cannot open. The page posts the code to the daemon in a form body, so the code is in no URL either:
not in the browser's history, not in a `Referer`.
"""

from __future__ import annotations

import html
import os
import secrets
import time
from pathlib import Path

DIR_NAME = "web-login"
# A sign-in file is useless once its code is used or expired (a minute); older ones are removed
# the next time `openvaala web` writes one.
STALE_AFTER_S = 120.0


def page_html(origin: str, code: str) -> str:
    """The page: a form that posts the code to `<origin>/login` by itself (a button if scripts
    are off)."""
    action = html.escape(f"{origin}/login", quote=True)
    value = html.escape(code, quote=True)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<title>Signing in to OpenVaala</title>
</head>
<body>
<form id="sign-in" method="post" action="{action}">
<input type="hidden" name="code" value="{value}">
<p>Signing in to OpenVaala… <button type="submit">Continue</button></p>
</form>
<script>document.getElementById("sign-in").submit();</script>
</body>
</html>
"""


def write_page(data_root: Path, origin: str, code: str, now: float | None = None) -> Path:
    """Write a new sign-in file (0600, created exclusively) in `<data root>/web-login/` (0700);
    its path."""
    directory = data_root / DIR_NAME
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(directory, 0o700)  # an existing one made by hand with wider rights
    _remove_stale(directory, time.time() if now is None else now)
    path = directory / f"sign-in-{secrets.token_hex(8)}.html"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, page_html(origin, code).encode())
    finally:
        os.close(fd)
    return path


def _remove_stale(directory: Path, now: float) -> None:
    for entry in directory.glob("sign-in-*.html"):
        try:
            if now - entry.lstat().st_mtime > STALE_AFTER_S:
                entry.unlink()
        except OSError:
            continue


def open_in_browser(page: Path, what: str) -> None:
    """Start the user's browser on the sign-in file; with none to start (a machine without a
    desktop, over ssh), say where the file is instead of announcing a browser that never comes."""
    import webbrowser

    if webbrowser.open(page.as_uri()):
        print(f"Opened {what} in your browser")
    else:
        print(
            "No browser could be started here: open this file in your browser within a minute "
            f"(it works once): {page.as_uri()}"
        )
