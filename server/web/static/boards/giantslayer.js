// Giantslayer: the radius-4 hex board (cells a1 … i9, centre e5 impassable).
//
// Notation (GS-14): a slide or step `a5-b5`, a trample chain `e6xe8xc8`, `pass`.
// Parts: the stone's cell, then each destination or landing cell; every prefix of a
// trample chain is its own legal move, so after a landing the picker offers "Done"
// beside the further landings.

import { axialToPixel, h, hexPoints, lastMoveText, destroy, renderBoard, s, stat, svgFor, who } from "./ui.js";

const SIZE = 20;

/** Axial (q, r) of a cell name such as "e5". */
function cellAxial(name) {
  const q = name.charCodeAt(0) - 97 - 4;
  const r = 5 - Number(name.slice(1));
  return [q, r];
}

function tokenize(text) {
  const t = text.trim().toLowerCase();
  if (t === "pass") return [{ key: "pass", target: null, label: "Pass (no legal move)" }];
  const trample = t.includes("x");
  const cells = t.split(trample ? "x" : "-");
  return cells.map((c, i) => {
    if (i === 0) return { key: c, target: c, label: `stone on ${c}` };
    if (trample) return { key: `x${c}`, target: c, label: `trample to ${c}`, doneLabel: "Stop here" };
    return { key: `-${c}`, target: c, label: `move to ${c}` };
  });
}

function lastCells(ctx) {
  const lm = ctx.view && ctx.view.last_move;
  if (!lm || lm === "pass") return [];
  return lm.toLowerCase().split(/[-x]/);
}

function status(ctx) {
  const v = ctx.view;
  const totals = v.totals || [0, 0];
  const toMove = v.to_move;
  const moverSeat = toMove === "white" ? v.white : toMove === "black" ? v.black : null;
  return [
    stat("Round", `${v.round} of ${v.rounds}`),
    stat("White (halogai)", who(ctx, v.white), ` — ${v.white_left} stones`),
    stat("Black (giants)", who(ctx, v.black), ` — ${v.black_left} giants`),
    stat("To move", toMove ? `${toMove} — ${who(ctx, moverSeat)}` : "nobody (match over)"),
    stat("Match score", `${who(ctx, 0)} ${totals[0]} : ${totals[1]} ${who(ctx, 1)}`),
    stat("Quiet plies", String(v.quiet_plies)),
    stat("Last move", h("span", { class: "gt-last" }, lastMoveText(ctx))),
    (v.results || []).length
      ? stat("Rounds", (v.results || []).map((r, i) =>
        `#${i + 1} White ${who(ctx, r.white)} ${r.white_points}–${r.black_points} (${r.reason})`).join("; "))
      : null,
  ];
}

function draw(ctx) {
  const v = ctx.view;
  const last = new Set(lastCells(ctx));
  const points = v.cells.map((c) => axialToPixel(...cellAxial(c), SIZE));
  const cells = [];
  v.cells.forEach((name, i) => {
    const [x, y] = points[i];
    const [q, r] = cellAxial(name);
    const edge = Math.max(Math.abs(q), Math.abs(r), Math.abs(q + r)) === 4;
    const centre = name === "e5";
    const piece = v.board[i];
    const cls = ["gt-cell", edge ? "gt-edge" : "", centre ? "gt-centre" : "", last.has(name) ? "gt-last" : ""];
    cells.push(s("g", { class: cls.join(" ").trim(), "data-target": name, "data-cell": name },
      s("polygon", { points: hexPoints(x, y, SIZE - 1) }),
      piece === "W" ? s("circle", { class: "gt-stone gt-white", cx: x, cy: y, r: SIZE * 0.45 }) : null,
      piece === "B" ? s("circle", { class: "gt-stone gt-black gt-giant", cx: x, cy: y, r: SIZE * 0.6 }) : null,
      s("text", { class: "gt-coord", x, y: y + SIZE * 0.8, "text-anchor": "middle" }, name),
    ));
  });
  return svgFor(points, SIZE * 1.2, { "aria-label": "Giantslayer board" }, cells);
}

const spec = { game: "giantslayer", tokenize, status, draw };

export function render(container, ctx) {
  renderBoard(container, ctx, spec);
}

export { destroy, tokenize };
