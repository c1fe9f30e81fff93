// The boards of the web client: `boardFor(game)` returns the board module of a game,
// whose `render(container, ctx)` draws the seat's view into `container` and turns the
// legal list into click targets (README.md in this folder describes ctx).

import * as giantslayer from "./giantslayer.js";
import * as causeway from "./causeway.js";
import * as tara from "./tara.js";
import * as giants from "./giants.js";

const BOARDS = { giantslayer, causeway, tara, giants };

/** The generic board for a game without its own: the view as text and one button per legal action. */
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

/** The board module for `game` (never throws): {render, destroy}. */
export function boardFor(game) {
  return BOARDS[game] || genericBoard;
}

// The boards' stylesheet, added once next to whatever the page already has.
if (typeof document !== "undefined" && !document.querySelector("link[data-gt-boards]")) {
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = new URL("./boards.css", import.meta.url).href;
  link.dataset.gtBoards = "";
  document.head.append(link);
}
