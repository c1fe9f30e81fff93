"""Playing on a board by clicking: the helpers the board tests share.

`click_action` plays one legal action through the board's targets and buttons, the way
a person would; `submit_bid` fills the GIANTS bid form; `board_state` reads what the
board shows (its legal list, view and status).
"""

from __future__ import annotations

import asyncio
from typing import Any

_MARKS = """([sel, key]) => {
    const b = document.querySelector(sel + ' .gt-board');
    if (!b) return [null, 0, false, false];
    return [b.dataset.sent, Number(b.dataset.prefixLen || 0),
            !!(key && b.querySelector(`button[data-choose="${CSS.escape(key)}"]`)),
            !!b.querySelector('button[data-cmd=done]')];
}"""


async def click_action(page: Any, board: str, text: str) -> None:
    """Play the legal action `text` on the board in `board` (a CSS selector) by clicking.

    The board's own reading of the action (`planFor`) says which target or button
    chooses each part; every part is chosen with a real click (or by the picker itself
    when there is a single way on, which is then skipped).
    """
    plan = await page.evaluate(
        """async ([sel, text]) => {
            const ui = await import('/boards/ui.js');
            return ui.planFor(document.querySelector(sel), text);
        }""",
        [board, text],
    )
    assert plan, f"the board does not offer {text!r}"
    sent, _, _, _ = await page.evaluate(_MARKS, [board, None])
    for i, part in enumerate(plan):
        now, prefix, _, _ = await page.evaluate(_MARKS, [board, None])
        if now != sent:
            return  # sent: the rest was chosen automatically (a single way on)
        if prefix > i:
            continue
        if part["target"] is not None:
            await page.locator(f'{board} [data-target="{part["target"]}"].gt-target').first.click()
            now, prefix, menu, _ = await page.evaluate(_MARKS, [board, part["key"]])
            if now == sent and prefix == i and menu:  # one cell, several moves: a menu
                await page.locator(f'{board} button[data-choose="{part["key"]}"]').first.click()
        else:
            await page.locator(f'{board} button[data-choose="{part["key"]}"]').first.click()
    # A whole action that longer ones extend waits for "Done".
    now, _, _, done = await page.evaluate(_MARKS, [board, None])
    if now == sent and done:
        await page.locator(f"{board} button[data-cmd=done]").first.click()


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


async def board_state(page: Any, board: str = "#board", full: bool = False) -> dict[str, Any] | None:
    """The board's own idea of the position: {legal, view, status, seat, pending, sent,
    prefix, seq, answeredAt}; `view` holds only phase, turn and my_bid unless `full`."""
    return await page.evaluate(
        """async ([sel, full]) => {
            const ui = await import('/boards/ui.js');
            const el = document.querySelector(sel);
            const st = el ? ui.boardState(el) : null;
            if (st && !full && st.view) {
                const v = st.view;
                st.view = { phase: v.phase, turn: v.turn, my_bid: v.my_bid };
            }
            return st;
        }""",
        [board, full],
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
