"""Real Chromium for the web tests, and the helpers that play a move by clicking.

Debian's `chromium` is driven by Playwright for Python through `executable_path`
(no browser download). When either is missing the web tests skip with the reason —
except in CI (`CI` set), where they fail, so a CI without the browser cannot pass.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

CHROMIUM = os.environ.get("GIANTS_CHROMIUM", "/usr/bin/chromium")


def chromium_or_skip() -> str:
    """The Chromium executable; skip (fail in CI) when it or Playwright is missing."""
    missing = None
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        missing = "Playwright for Python is not installed (pip install playwright)"
    if missing is None and not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        missing = f"no Chromium at {CHROMIUM} (apt-get install chromium, or set GIANTS_CHROMIUM)"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests need a browser in CI: {missing}")
        pytest.skip(missing)
    return CHROMIUM


async def click_action(page: Any, board: str, text: str) -> None:
    """Play the legal action `text` on the board in `board` (a CSS selector) by clicking.

    The board's own reading of the action (`planFor`) says which target or button
    chooses each part; every part is chosen through the DOM as a person would. Parts
    the picker chose by itself (a single way on) are skipped.
    """
    plan = await page.evaluate(
        """async ([sel, text]) => {
            const ui = await import('/boards/ui.js');
            return ui.planFor(document.querySelector(sel), text);
        }""",
        [board, text],
    )
    assert plan, f"the board does not offer {text!r}"
    root = page.locator(f"{board} .gt-board")
    sent = await root.get_attribute("data-sent")

    async def was_sent() -> bool:
        return await root.get_attribute("data-sent") != sent

    for i, part in enumerate(plan):
        if await was_sent():
            break  # the rest was chosen automatically (a single way on)
        if int(await root.get_attribute("data-prefix-len") or 0) > i:
            continue
        if part["target"] is not None:
            await page.locator(f'{board} [data-target="{part["target"]}"].gt-target').first.click()
            choice = page.locator(f'{board} button[data-choose="{part["key"]}"]')
            if not await was_sent() and await root.get_attribute("data-prefix-len") == str(i) \
                    and await choice.count():
                await choice.first.click()
        else:
            await page.locator(f'{board} button[data-choose="{part["key"]}"]').first.click()
    # A whole action that longer ones extend waits for "Done".
    if not await was_sent():
        done = page.locator(f"{board} button[data-cmd=done]")
        if await done.count():
            await done.first.click()


async def submit_bid(page: Any, board: str, text: str) -> None:
    """Seal the GIANTS bid `text` (`bid 2 w1 c`) through the bid form."""
    words = text.split()
    markers = words[1]
    workers = next((w[1:] for w in words[2:] if w.startswith("w")), "0")
    chief = "c" in words[2:]
    await page.select_option(f"{board} #gt-bid-markers", markers)
    await page.select_option(f"{board} #gt-bid-workers", workers)
    box = page.locator(f"{board} #gt-bid-chief")
    if await box.count():
        await box.set_checked(chief)
    await page.locator(f"{board} #gt-bid-submit").click()
