"""Playing on a board by clicking: the helpers the board tests share.

`click_action` plays one legal action through the board's targets and buttons, the way
a person would; `submit_bid` fills the GIANTS bid form; `board_state` reads what the
board shows (its legal list, view and status).
"""

from __future__ import annotations

import asyncio
from typing import Any


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


async def board_state(page: Any, board: str = "#board") -> dict[str, Any] | None:
    """The board's own idea of the position: {legal, view, status, seat, pending, sent, prefix}."""
    return await page.evaluate(
        """async (sel) => {
            const ui = await import('/boards/ui.js');
            const el = document.querySelector(sel);
            return el ? ui.boardState(el) : null;
        }""",
        board,
    )


async def wait_sent(page: Any, board: str, sent: int, timeout: float = 20.0) -> str | None:
    """Wait until the board has sent its next action (its `sent` count was `sent`) and
    either the position after it reached the board (returns None) or the server refused
    it (returns the message the board shows)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        st = await board_state(page, board)
        if st and st["sent"] > sent and not st["pending"]:
            if st["seq"] > st["answeredAt"] >= 0:
                return None
            refused = await page.locator(f"{board} .gt-message.gt-error").all_inner_texts()
            if refused:
                return refused[0]
        if loop.time() > end:
            raise AssertionError(f"the board did not move on after sending (state {st and {k: v for k, v in st.items() if k != 'view'}})")
        await asyncio.sleep(0.03)
