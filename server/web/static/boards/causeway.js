// Giant's Causeway (barrier, spellstone, quick): the open hex plane around the Causeway.
//
// Notation (docs/rules/causeway.md): `giant@0,1` setup placements, `0,1>3,-2` steps,
// `0,1^e+2,1/5,-3+1,1` leaps with drops (and the barrier or spellstone choice after
// `/`), `destroy@4,0`, `pass`. Parts: a placement is its cell, then the piece; a
// move is the giant's cell, then the destination of a step or the landing cell of a
// leap, then each drop's stack and choice. The landing cell is not written in the
// notation: it is the first empty cell after the run of occupied cells (geometry of
// the drawing, not a rule check; the server decides legality).

import { axialToPixel, h, hexPoints, lastMoveText, destroy, renderBoard, s, stat, svgFor, who } from "./ui.js";

const SIZE = 18;
const DIRS = { e: [1, 0], ne: [1, -1], nw: [0, -1], w: [-1, 0], sw: [-1, 1], se: [0, 1] };
const KIND_LETTER = { giant: "G", trapper: "T", spikey: "S" };

function parse(cell) {
  const [q, r] = cell.split(",").map(Number);
  return [q, r];
}

function norm(cell) {
  return parse(cell.replace(/\s+/g, "")).join(",");
}

/** The landing cell of a leap from `start` along `dir` in view `v`. */
export function landing(v, start, dir) {
  let [q, r] = parse(start);
  const [dq, dr] = DIRS[dir];
  for (let i = 0; i < 200; i++) {
    q += dq;
    r += dr;
    const key = `${q},${r}`;
    if (!(key in v.stacks) && !(key in v.giants)) return key;
  }
  return null;
}

function tokenize(text, ctx) {
  const t = text.replace(/\s+/g, "").toLowerCase();
  if (t === "pass") return [{ key: "pass", target: null, label: "Pass (no legal move)" }];
  if (t.startsWith("destroy@")) {
    const cell = norm(t.slice(8));
    return [{ key: t, target: cell, label: `destroy your tower on ${cell}` }];
  }
  if (t.includes("@")) {
    const [piece, cell] = t.split("@");
    const c = norm(cell);
    return [
      { key: `at:${c}`, target: c, label: `place on ${c}` },
      { key: `piece:${piece}`, target: null, label: `place ${piece}` },
    ];
  }
  if (t.includes("^")) {
    const [head, rest] = t.split("^");
    const start = norm(head);
    const [dir, ...drops] = rest.split("+");
    const land = landing(ctx.view, start, dir);
    const tokens = [
      { key: `from:${start}`, target: start, label: `giant on ${start}` },
      { key: `^${dir}`, target: land, label: `leap ${dir} to ${land}`, doneLabel: "Leap without more drops" },
    ];
    for (const d of drops) {
      const [cell, choice] = d.split("/");
      tokens.push({ key: `+${norm(cell)}`, target: norm(cell), label: `drop on ${norm(cell)}`, doneLabel: "No more drops" });
      if (choice) {
        const special = ctx.view.special === "spellstone" ? "turn the spellstone on" : "take the barrier from";
        tokens.push({ key: `/${norm(choice)}`, target: norm(choice), label: `${special} ${norm(choice)}` });
      }
    }
    return tokens;
  }
  if (t.includes(">")) {
    const [a, b] = t.split(">");
    return [
      { key: `from:${norm(a)}`, target: norm(a), label: `giant on ${norm(a)}` },
      { key: `>${norm(b)}`, target: norm(b), label: `step to ${norm(b)}` },
    ];
  }
  return [{ key: t, target: null, label: t }];
}

function lastCells(ctx) {
  // The move just played comes with the patch (`act`), not in the view.
  const lm = ((ctx.lastMove && ctx.lastMove.action) || "").replace(/\s+/g, "");
  const out = new Set();
  if (!lm || lm === "pass") return out;
  if (lm.includes("@")) out.add(norm(lm.split("@")[1]));
  else if (lm.includes(">")) lm.split(">").forEach((c) => out.add(norm(c)));
  else if (lm.includes("^")) {
    const [head, rest] = lm.split("^");
    out.add(norm(head));
    rest.split("+").slice(1).forEach((d) => d.split("/").forEach((c) => out.add(norm(c))));
  }
  return out;
}

function status(ctx) {
  const v = ctx.view;
  // Whose turn it is: the room's `to_act`, read as a colour through the view's `seats`.
  const toAct = (ctx.room && ctx.room.to_act) || [];
  const toMove = ["white", "black"].find((colour) => toAct.includes(v.seats[colour]));
  const side = (colour) => {
    const seat = v.seats[colour];
    const parts = [who(ctx, seat), ` — ${v.supply[colour]} blanks in supply, ${v.towers[colour]} tower(s)`];
    if (v.special) parts.push(`, ${v.specials[colour]} ${v.special}(s) on the board`);
    if (v.phase === "setup" && v.setup_left[colour].length) parts.push(`, to place: ${v.setup_left[colour].join(" ")}`);
    return parts;
  };
  return [
    stat("Rules", ctx.rules || v.rules),
    stat("White", ...side("white")),
    stat("Black", ...side("black")),
    stat("Phase", v.phase),
    stat("To move", toMove ? `${toMove} — ${who(ctx, v.seats[toMove])}` : "nobody now"),
    stat("Ply", `${v.ply} of ${v.ply_cap}`),
    v.end ? stat("End", v.end) : null,
    stat("Last move", h("span", { class: "gt-last" }, lastMoveText(ctx))),
  ];
}

function draw(ctx, sel) {
  const v = ctx.view;
  const cells = new Set([...Object.keys(v.stacks), ...Object.keys(v.giants)]);
  for (const o of sel.options) if (o.target) cells.add(o.target);
  for (const t of sel.targets) cells.add(t);
  // one ring of empty cells around the Causeway so the plane reads as open
  for (const c of [...cells]) {
    const [q, r] = parse(c);
    for (const [dq, dr] of Object.values(DIRS)) cells.add(`${q + dq},${r + dr}`);
  }
  const last = lastCells(ctx);
  const list = [...cells].sort();
  const points = list.map((c) => axialToPixel(...parse(c), SIZE));
  const out = list.map((c, i) => {
    const [x, y] = points[i];
    const stack = v.stacks[c];
    const giant = v.giants[c];
    const won = v.won[c];
    const cls = ["gt-cell", stack || giant ? "" : "gt-empty", last.has(c) ? "gt-last" : "",
      won ? "gt-won" : "", v.destroyed[c] ? "gt-destroyed" : ""];
    const children = [s("polygon", {
      points: hexPoints(x, y, SIZE - 1),
      style: won ? `stroke:${won === "white" ? "#c9a227" : "#111"}` : null,
    })];
    if (stack) children.push(...drawStack(x, y, stack));
    if (giant) {
      const [colour, kind] = giant;
      children.push(
        s("circle", { class: "gt-giant-piece", cx: x, cy: y, r: SIZE * 0.62, fill: colour === "white" ? "#fff" : "#222" }),
        s("text", { class: "gt-piece-label", x, y: y + 3, "text-anchor": "middle", fill: colour === "white" ? "#222" : "#fff" },
          KIND_LETTER[kind] || "?"),
      );
    }
    children.push(s("text", { class: "gt-coord", x, y: y + SIZE * 0.85, "text-anchor": "middle" }, c));
    return s("g", { class: cls.join(" ").replace(/\s+/g, " ").trim(), "data-target": c, "data-cell": c }, children);
  });
  return svgFor(points, SIZE * 1.2, { "aria-label": "Giant's Causeway" }, out);
}

/** A stack drawn as discs bottom to top; a barrier or spellstone (W/B) as a diamond. */
function drawStack(x, y, stack) {
  const out = [];
  [...stack].forEach((stone, i) => {
    const cy = y + SIZE * 0.35 - i * SIZE * 0.3;
    const fill = stone.toLowerCase() === "w" ? "#fbfbf5" : "#2b2b2b";
    if (stone === "W" || stone === "B") {
      const d = SIZE * 0.34;
      out.push(s("polygon", { class: "gt-stone", points: `${x},${cy - d} ${x + d},${cy} ${x},${cy + d} ${x - d},${cy}`, fill, stroke: "#c62828" }));
    } else {
      out.push(s("ellipse", { class: "gt-stone", cx: x, cy, rx: SIZE * 0.5, ry: SIZE * 0.2, fill }));
    }
  });
  out.push(s("text", { class: "gt-stack-label", x: x + SIZE * 0.6, y: y - SIZE * 0.35, "text-anchor": "middle" }, String(stack.length)));
  return out;
}

const spec = { game: "causeway", tokenize, status, draw };

export function render(container, ctx) {
  renderBoard(container, ctx, spec);
}

export { destroy, tokenize };
