"""The web client's static files (package data under `static/`) and how they are served.

`http.py` calls `static_response(path, if_none_match)` for plain HTTP requests that are
not /healthz or /metrics; it gets `None` for anything that is not a shipped file (the
caller answers 404). Files are read once and kept in memory with their ETag: the
client is a few hundred KiB and never changes while the server runs.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

STATIC_ROOT = Path(__file__).resolve().parent / "static"

# Only these extensions are served; anything else (a stray .py, a README) is a 404.
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
}

# A URL path of plain segments: letters, digits, '-', '_', '.', no segment starting
# with '.' (so no '..', no dotfiles), no '%' escapes, no backslashes, no empty segments.
_SAFE_PATH = re.compile(r"^/(?:[A-Za-z0-9_-][A-Za-z0-9_.-]*/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*$")

# The page is a single document; its scripts are same-origin modules. The policy
# keeps injected markup from running code even if a name or a view ever slipped
# through unescaped. 'unsafe-inline' for styles only: boards set SVG style attributes.
CSP = (
    "default-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)

_HOST = re.compile(r"^[A-Za-z0-9.-]+(?::[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::[0-9]{1,5})?$")


def csp_for(host: str | None) -> str:
    """The page's policy; names the WebSocket origin of `host` explicitly, since older
    browsers do not let 'self' cover ws:/wss: (a malformed Host gets 'self' only)."""
    if host and len(host) <= 262 and _HOST.match(host):
        return CSP.replace("connect-src 'self'", f"connect-src 'self' ws://{host} wss://{host}")
    return CSP


@dataclass(frozen=True)
class StaticFile:
    """One file ready to send: body, content type, strong ETag."""

    body: bytes
    content_type: str
    etag: str


_cache: dict[str, StaticFile | None] = {}


def lookup(path: str) -> StaticFile | None:
    """The shipped file at URL `path` ("/" is index.html), or None if there is none.

    Hostile paths (traversal, escapes, dotfiles, unknown extensions, symlinks leaving
    the static directory) are None, never an error.
    """
    if path == "/":
        path = "/index.html"
    if path in _cache:
        return _cache[path]
    found: StaticFile | None = None
    if len(path) <= 256 and _SAFE_PATH.match(path):
        suffix = Path(path).suffix
        content_type = CONTENT_TYPES.get(suffix)
        candidate = (STATIC_ROOT / path.lstrip("/")).resolve()
        if content_type and candidate.is_relative_to(STATIC_ROOT) and candidate.is_file():
            body = candidate.read_bytes()
            etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
            found = StaticFile(body, content_type, etag)
    if len(_cache) < 1024:  # bounded: a scan of random paths cannot grow it forever
        _cache[path] = found
    return found
