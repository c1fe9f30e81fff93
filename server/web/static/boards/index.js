// Placeholder board registry (web-core): every game gets the generic text board.
// web-boards replaces this file with the real per-game boards (see README.md).

/** The generic board: the view as text and one button per legal action. */
export const genericBoard = {
  render(container, ctx) {
    let root = container.querySelector(":scope > [data-board]");
    if (!root) {
      container.replaceChildren();
      root = document.createElement("div");
      root.className = "generic-board";
      container.append(root);
    }
    root.dataset.board = ctx.game;
    const pre = document.createElement("pre");
    pre.className = "generic-view";
    pre.textContent = JSON.stringify(ctx.view, null, 1);
    const moves = document.createElement("div");
    moves.className = "generic-moves";
    for (const action of ctx.legal.slice(0, 200)) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = action;
      b.dataset.action = action;
      b.setAttribute("aria-label", `play ${action}`);
      b.addEventListener("click", () => ctx.act(action).catch(() => {}));
      moves.append(b);
    }
    root.replaceChildren(pre, moves);
  },
  destroy(container) {
    container.replaceChildren();
  },
};

/** The board module for `game` (never throws). */
export function boardFor(game) {
  return genericBoard;
}
