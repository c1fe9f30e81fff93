"""Page helpers for the browser tests (fixtures are in conftest.py)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

DOCS_WEB = Path(__file__).resolve().parents[2] / "docs" / "web"


async def wait_connected(page: Any, timeout: float = 10_000) -> None:
    await page.wait_for_selector('#conn[data-state="connected"]', timeout=timeout)


def room_id_of(page: Any) -> str:
    """The room id of a `#/room/ID` or `#/replay/ID` page."""
    fragment = page.url.split("#", 1)[1]
    return fragment.split("/")[2].split("?")[0]


async def screenshot(page: Any, name: str, full_page: bool = True) -> Path:
    """Take a screenshot for docs/web.md.

    With GIANTS_SCREENSHOTS=1 it is written to docs/web/<name>.png (that is how the
    pictures in the docs are made: `GIANTS_SCREENSHOTS=1 pytest tests/web`); otherwise
    it goes to a temporary directory so ordinary runs leave the work tree clean.
    """
    if os.environ.get("GIANTS_SCREENSHOTS") == "1":
        folder = DOCS_WEB
    else:
        folder = Path(tempfile.gettempdir()) / "giants-web-screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    await page.screenshot(path=str(path), full_page=full_page)
    return path


async def wait_until(page: Any, expression: str, timeout: float = 10.0) -> Any:
    """Poll a JS function (source text) until it returns a truthy value; return it.

    Playwright's `wait_for_function` compiles its predicate with eval inside the page,
    which the client's Content-Security-Policy forbids; `evaluate` is not affected.
    """
    import asyncio

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        value = await page.evaluate(expression)
        if value:
            return value
        if loop.time() > end:
            raise AssertionError(f"still false after {timeout}s: {expression}")
        await asyncio.sleep(0.05)
