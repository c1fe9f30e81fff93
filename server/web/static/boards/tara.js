// Tara — Four Treasures: 45 hills on a 7 x 7 square without its corners.
//
// Notation (TA-11): `D4` builds on a hill, `xD4` captures the besieged ringfort there.
// One part per move: the hill. Bridges (TA-6) are drawn between neighbouring
// ringforts of one colour; the hills that must be captured are outlined in red.

import { h, lastMoveText, destroy, renderBoard, s, stat, who } from "./ui.js";

const COLUMNS = "ABCDEFG";
const CELL = 40;

function tokenize(text) {
  const t = text.trim();
  if (/^x/i.test(t)) {
    const hill = t.slice(1).toUpperCase();
    return [{ key: `x${hill}`, target: hill, label: `capture ${hill}` }];
  }
  const hill = t.toUpperCase();
  return [{ key: hill, target: hill, label: `build on ${hill}` }];
}

function centre(name) {
  const col = COLUMNS.indexOf(name[0]);
  const row = Number(name.slice(1));
  return [col * CELL + CELL / 2, (7 - row) * CELL + CELL / 2];
}

function status(ctx) {
  const v = ctx.view;
  const totals = v.totals || [0, 0];
  const line = (seat) => [
    who(ctx, seat), v.colours ? ` (${v.colours[seat]})` : "",
    ` — bridges ${v.bridges[seat]} (${v.bridges_left[seat]} left), territory ${v.territory[seat]}`,
  ];
  return [
    stat("Game", `${v.game} of ${v.games}`),
    stat("Seat 0", ...line(0)),
    stat("Seat 1", ...line(1)),
    stat("To move", v.to_move ? `${v.to_move} — ${who(ctx, v.seat_to_move)}` : "nobody (match over)"),
    (v.must_capture || []).length ? stat("Must capture", v.must_capture.join(" ")) : null,
    v.out ? stat("OUT", `${v.out} called OUT`) : null,
    stat("Match score", `${who(ctx, 0)} ${totals[0]} : ${totals[1]} ${who(ctx, 1)}`),
    stat("Last move", h("span", { class: "gt-last" }, lastMoveText(ctx))),
    (v.results || []).length
      ? stat("Games", v.results.map((r, i) =>
        `#${i + 1} ${r.points[0]}–${r.points[1]} (${r.reason}${r.out != null ? `, ${who(ctx, r.out)} out` : ""})`).join("; "))
      : null,
  ];
}

function draw(ctx) {
  const v = ctx.view;
  const hills = v.hills;
  const last = (v.last_move || "").replace(/^x/i, "").toUpperCase();
  const must = new Set(v.must_capture || []);
  const bridges = [];
  const cells = [];
  const stones = [];
  for (const [name, piece] of Object.entries(hills)) {
    const [x, y] = centre(name);
    for (const next of [`${COLUMNS[COLUMNS.indexOf(name[0]) + 1]}${name.slice(1)}`, `${name[0]}${Number(name.slice(1)) - 1}`]) {
      if (piece !== "." && hills[next] === piece) {
        const [x2, y2] = centre(next);
        bridges.push(s("line", { class: "gt-bridge", x1: x, y1: y, x2, y2, stroke: piece === "W" ? "#b9b9b9" : "#333" }));
      }
    }
    const cls = ["gt-cell", "gt-hill", name === last ? "gt-last" : "", must.has(name) ? "gt-must" : ""];
    cells.push(s("g", { class: cls.join(" ").trim(), "data-target": name, "data-cell": name },
      s("rect", { class: "gt-hit", x: x - CELL / 2 + 2, y: y - CELL / 2 + 2, width: CELL - 4, height: CELL - 4 }),
      s("text", { class: "gt-coord", x: x + CELL * 0.3, y: y + CELL * 0.42, "text-anchor": "middle" }, name),
    ));
    if (piece !== ".") {
      stones.push(s("circle", { class: `gt-stone ${piece === "W" ? "gt-white" : "gt-black"}`, cx: x, cy: y, r: CELL * 0.3, "data-stone": name }));
    }
  }
  const labels = [];
  for (let c = 0; c < 7; c++) {
    labels.push(s("text", { class: "gt-coord", x: c * CELL + CELL / 2, y: 7 * CELL + 12, "text-anchor": "middle" }, COLUMNS[c]));
    labels.push(s("text", { class: "gt-coord", x: -10, y: c * CELL + CELL / 2 + 3, "text-anchor": "middle" }, String(7 - c)));
  }
  return s("svg", { class: "gt-svg", viewBox: `-20 -6 ${7 * CELL + 26} ${7 * CELL + 26}`, role: "group", "aria-label": "Tara board" },
    cells, bridges, stones, labels);
}

const spec = { game: "tara", tokenize, status, draw };

export function render(container, ctx) {
  renderBoard(container, ctx, spec);
}

export { destroy, tokenize };
