"""Page helpers for the browser tests (fixtures are in conftest.py)."""

from __future__ import annotations

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
    """Save a screenshot for docs/web.md (the test run keeps them current)."""
    DOCS_WEB.mkdir(parents=True, exist_ok=True)
    path = DOCS_WEB / f"{name}.png"
    await page.screenshot(path=str(path), full_page=full_page)
    return path
