// GIANTS: the island map, the public table and this seat's private screen.
//
// The page holds only its own seat's view (the server filters it): `screen` and
// `my_bid` are this seat's; every other seat shows only what the table sees — whether
// it has bid (never what, until the reveal), what stands in front of its screen, its
// points and reserves. Moves by pointing (docs/rules/giants.md notation):
//   claim:      a Moai size in the offer, then how to pay
//   placement:  a figure (button), then a hex; then logs, a power or an Ahu to reserve
//   transport:  a statue, then a destination hex (then "Transport", after showing the
//               path, the strength each entered hex needs and whose pieces carry it),
//               an Ahu to erect on or crown, or "mark"; "look" is an Ahu. The legal list
//               has one route per destination (the cheapest); "Choose another route"
//               builds any other path hex by hex and the server judges it when sent.
//   returns / cleanup: a statue, then mark / release
// Bids have their own form (markers, workers, chief) built from the legal bids.

import {
  SEAT_COLOURS, h, hexPoints, lastMoveText, offsetToPixel, destroy, renderBoard, s, seatName, stat, svgFor, who,
} from "./ui.js";
import { bidForm, panels, transportDetail } from "./giants-panels.js";
import { MAP, describeToken } from "./giants-data.js";

const SIZE = 22;
const key = (pair) => `${pair[0]},${pair[1]}`;
const SPECIAL = { [key(MAP.quarry)]: "Q", [key(MAP.clay_pit)]: "C", [key(MAP.village)]: "V", [key(MAP.hut)]: "H" };
const POWER_HEX = { village: key(MAP.village), hut: key(MAP.hut), clay: key(MAP.clay_pit) };
const POWER_LABEL = {
  village: "use the village (a worker from your reserve)",
  hut: "use the sorcerers' hut (a marker from your reserve)",
  clay: "use the clay pit (a headdress)",
  forest: "take this forest's logs",
};

/** "(5,3)" -> "5,3" */
function hexKey(text) {
  return text.replace(/[()\s]/g, "");
}

function tokenize(text, ctx) {
  const words = text.trim().split(/\s+/);
  const [head, ...rest] = words;
  const phase = ctx.view.phase;
  if (head === "bid") return null; // the bid form
  if (head === "pass") {
    const label = { returns: "Done marking", cleanup: "Done releasing", claim: "Pass (claim nothing)" }[phase] || "Pass";
    return [{ key: "pass", target: null, label }];
  }
  if (head === "claim") {
    const [size, pay] = rest;
    return [
      { key: `claim ${size}`, target: `offer:${size}`, label: `claim a size-${size} Moai` },
      { key: pay, target: null, label: pay === "chief" ? "pay with your chief" : `pay with ${size} worker(s)` },
    ];
  }
  if (head === "place") {
    const [figure, hex, , logs] = rest;
    const k = hexKey(hex);
    const tokens = [
      { key: `fig:${figure}`, target: null, label: `Place your ${figure}` },
      { key: `hex:${k}`, target: k, label: `place the ${figure} on (${k})`, doneLabel: `Just place the ${figure} here` },
    ];
    if (figure !== "chief") {
      tokens.push({ key: `logs ${logs}`, target: null, label: logs === "0" ? "without logs" : `with ${logs} log(s)` });
    }
    return tokens;
  }
  if (head === "sorcerer" || head === "chief") {
    const [power, a, b] = rest;
    const cost = head === "chief" ? " — 2 half-tablets" : "";
    if (power === "reserve") {
      const k = hexKey(b);
      return [
        { key: `fig:${head}`, target: null, label: `Place your ${head}` },
        { key: `hex:${k}`, target: k, label: `stand on (${k})` },
        { key: `reserve ${a}`, target: `ahu:${a}`, label: `reserve Ahu ${a} with a base${cost}` },
      ];
    }
    const k = power === "forest" ? hexKey(a) : POWER_HEX[power];
    return [
      { key: `fig:${head}`, target: null, label: `Place your ${head}` },
      { key: `hex:${k}`, target: k, label: `stand on (${k})` },
      { key: `power ${power}`, target: null, label: POWER_LABEL[power] + cost },
    ];
  }
  if (head === "tablet") return [{ key: "tablet", target: null, label: "A marker to the front (1 half-tablet)" }];
  if (head === "neutral") {
    const [src, dst] = rest[0].split(">");
    const first = { key: "neutral", target: null, label: "A neutral worker (spend a marker)" };
    if (dst === undefined) return [first, { key: `hex:${hexKey(src)}`, target: hexKey(src), label: `put a new neutral worker on (${hexKey(src)})` }];
    return [
      first,
      { key: `from:${hexKey(src)}`, target: hexKey(src), label: `move the neutral worker on (${hexKey(src)})` },
      { key: `hex:${hexKey(dst)}`, target: hexKey(dst), label: `to (${hexKey(dst)})` },
    ];
  }
  if (head === "transport") {
    const [sid, path] = rest;
    const cells = path.split(">").map((p) => hexKey(p.split("=")[0]));
    const dest = cells[cells.length - 1];
    return [
      { key: `st:${sid}`, target: `statue:${sid}`, label: `${sid}` },
      { key: `to:${dest}`, target: dest, label: `carry ${sid} to (${dest})` },
      { key: "go", target: null, label: `Transport ${sid}`, confirm: true },
    ];
  }
  if (head === "erect" || head === "headdress") {
    const [sid, ahu] = rest;
    return [
      { key: `st:${sid}`, target: `statue:${sid}`, label: `${sid}` },
      { key: `${head} ${ahu}`, target: `ahu:${ahu}`, label: head === "erect" ? `erect ${sid} on Ahu ${ahu}` : `put ${sid} on the Moai of ${ahu}` },
    ];
  }
  if (head === "mark" || head === "release") {
    const [sid] = rest;
    return [
      { key: `st:${sid}`, target: `statue:${sid}`, label: `${sid}` },
      { key: head, target: null, label: head === "mark" ? `put your marker on ${sid}` : `take your marker back from ${sid}` },
    ];
  }
  if (head === "look") return [{ key: `look ${rest[0]}`, target: `ahu:${rest[0]}`, label: `look under the Moai of ${rest[0]} (1 half-tablet)` }];
  return [{ key: text, target: null, label: text }];
}

function status(ctx) {
  const v = ctx.view;
  const toAct = (ctx.room && ctx.room.to_act) || [];
  return [
    stat("Turn", `${v.turn} of 20`),
    stat("Phase", v.phase),
    stat("First player", who(ctx, v.first)),
    stat("To act", v.phase === "auction" ? "everyone (sealed bids)" : (toAct || []).map((t) => who(ctx, t)).join(", ") || "—"),
    stat("Dice", (v.dice || []).join(" ") || "—"),
    stat("Last move", h("span", { class: "gt-last" }, lastMoveText(ctx))),
    v.seed != null ? stat("Seed", String(v.seed)) : stat("Seed commitment", h("code", {}, (v.seed_commitment || "").slice(0, 16) + "…")),
  ];
}

/** The hexes and Ahu the last action named (a transport's whole path) to highlight. */
function lastPath(ctx) {
  const a = ctx.lastMove && ctx.lastMove.action;
  if (!a) return [];
  const out = [...a.matchAll(/\((-?\d+),(-?\d+)\)/g)].map((m) => `${m[1]},${m[2]}`);
  for (const m of a.matchAll(/\b(A\d\d)\b/g)) out.push(`ahu:${m[1]}`);
  const power = /^(sorcerer|chief) (village|hut|clay)$/.exec(a);
  if (power) out.push(POWER_HEX[power[2]]);
  return out;
}

function pathOf(sel, ctx) {
  const to = sel.chosen.find((t) => t.key.startsWith("to:"));
  const st = sel.chosen.find((t) => t.key.startsWith("st:"));
  if (!to || !st) return null;
  const text = (ctx.legal || []).find((l) => l.startsWith(`transport ${st.key.slice(3)} `) &&
    hexKey(l.split(">").pop().split("=")[0]) === to.key.slice(3));
  if (!text) return null;
  return text.split(/\s+/)[2].split(">").map((p) => hexKey(p.split("=")[0]));
}

function drawMap(ctx, sel) {
  const v = ctx.view;
  const points = [];
  const layer = [];
  const last = new Set(lastPath(ctx));
  const statuesAt = {};
  for (const [sid, st] of Object.entries(v.statues || {})) {
    if (st.front != null) continue; // in front of a screen: shown with that seat
    (statuesAt[st.hex] = statuesAt[st.hex] || []).push(sid);
  }
  for (const cell of MAP.land) {
    const k = key(cell);
    const [x, y] = offsetToPixel(cell[0], cell[1], SIZE);
    points.push([x, y]);
    const forest = v.forests && k in v.forests;
    const cls = ["gt-cell", "gt-land", SPECIAL[k] ? "gt-special" : "", forest ? "gt-forest" : "", last.has(k) ? "gt-last" : ""];
    const kids = [s("polygon", { points: hexPoints(x, y, SIZE - 0.5) })];
    if (SPECIAL[k]) kids.push(s("text", { class: "gt-label", x: x - SIZE * 0.55, y: y - SIZE * 0.35 }, SPECIAL[k]));
    if (forest) {
      kids.push(s("g", { class: "gt-logs" },
        s("rect", { x: x + SIZE * 0.05, y: y - SIZE * 0.72, width: SIZE * 0.6, height: SIZE * 0.38, rx: 2, style: "fill:#6d4c41" }),
        s("text", { class: "gt-label", x: x + SIZE * 0.35, y: y - SIZE * 0.44, "text-anchor": "middle", fill: "#fff" }, String(v.forests[k])),
        s("title", {}, `forest with ${v.forests[k]} log(s)`)));
    }
    kids.push(...drawPieces(x, y, (v.board || {})[k] || {}));
    const here = statuesAt[k] || [];
    here.slice(0, 3).forEach((sid, i) => {
      const st = v.statues[sid];
      const cx = x - SIZE * 0.45 + i * SIZE * 0.45;
      const cy = y + SIZE * 0.45;
      kids.push(s("g", { class: "gt-statue", "data-target": `statue:${sid}` },
        s("rect", { class: "gt-hit", x: cx - 6, y: cy - 6, width: 12, height: 12, rx: st.kind === "H" ? 6 : 2,
          style: `fill:${st.marker != null ? SEAT_COLOURS[st.marker] : "#6d4c41"};stroke:#222` }),
        s("text", { class: "gt-label", x: cx, y: cy + 2.5, "text-anchor": "middle", fill: "#fff" }, st.kind === "H" ? "H" : String(st.size)),
      ));
    });
    if (here.length > 3) kids.push(s("text", { class: "gt-label", x: x + SIZE * 0.55, y: y + SIZE * 0.75 }, `+${here.length - 3}`));
    kids.push(s("text", { class: "gt-coord", x: x + SIZE * 0.3, y: y + SIZE * 0.05, "text-anchor": "middle" }, k));
    layer.push(s("g", { class: cls.join(" ").replace(/\s+/g, " ").trim(), "data-target": k, "data-cell": k }, kids));
  }
  for (const a of MAP.ahu) {
    const [x, y] = offsetToPixel(a.hex[0], a.hex[1], SIZE);
    points.push([x, y]);
    const st = (v.ahu || {})[a.id];
    const kids = [s("polygon", { points: hexPoints(x, y, SIZE - 3) }),
      s("text", { class: "gt-label", x, y: y - SIZE * 0.35, "text-anchor": "middle" }, `${a.id} ${a.moai}/${a.headdress}`)];
    if (st && st.reserved != null) {
      kids.push(s("circle", { cx: x - SIZE * 0.4, cy: y + SIZE * 0.2, r: 4, fill: SEAT_COLOURS[st.reserved], stroke: "#fff" },
        s("title", {}, `reserved by ${seatName(ctx, st.reserved)}`)));
    }
    if (st && st.moai) {
      kids.push(s("rect", { x: x - 5, y: y - 3, width: 10, height: 6 + st.moai * 3, fill: "#5d4037",
        stroke: st.owner != null ? SEAT_COLOURS[st.owner] : "#fff", "stroke-width": 2 },
      s("title", {}, `Moai of size ${st.moai}${st.owner != null ? `, base of ${seatName(ctx, st.owner)}` : ", base hidden"}`)));
      if (st.headdress) kids.push(s("circle", { cx: x, cy: y - 5, r: 3.5, fill: "#c62828" }));
    }
    layer.push(s("g", { class: `gt-cell gt-ahu${last.has(`ahu:${a.id}`) ? " gt-last" : ""}`, "data-target": `ahu:${a.id}`, "data-ahu": a.id }, kids));
  }
  const path = pathOf(sel, ctx);
  if (path) {
    const pts = path.map((k) => offsetToPixel(...k.split(",").map(Number), SIZE).map((n) => n.toFixed(1)).join(","));
    layer.push(s("polyline", { class: "gt-path", points: pts.join(" ") }));
  }
  const svg = svgFor(points, SIZE * 1.3, { "aria-label": "The island" }, layer);
  const vb = svg.getAttribute("viewBox").split(" ");
  svg.prepend(s("rect", { class: "gt-sea", x: vb[0], y: vb[1], width: vb[2], height: vb[3] }));
  return svg;
}

/** Figures and logs on a hex as small tokens: a disc per owner and kind with its count. */
function drawPieces(x, y, tokens) {
  const out = [];
  const entries = Object.entries(tokens).filter(([, [count]]) => count > 0);
  entries.forEach(([token, [count, used]], i) => {
    const cx = x - SIZE * 0.5 + (i % 3) * SIZE * 0.5;
    const cy = y - SIZE * 0.05 + Math.floor(i / 3) * SIZE * 0.4 - SIZE * 0.1;
    const owner = token.length > 1 ? Number(token.slice(1)) : null;
    const kind = token[0];
    const fill = kind === "l" ? "#8d6e63" : owner != null ? SEAT_COLOURS[owner] : "#fff";
    out.push(s("g", { class: "gt-piece", opacity: used >= count ? 0.45 : 1 },
      s("circle", { cx, cy, r: kind === "c" ? 6 : 5, fill, stroke: kind === "n" ? "#000" : "#fff" }),
      s("text", { class: "gt-label", x: cx, y: cy + 2.5, "text-anchor": "middle", fill: kind === "n" || kind === "l" ? "#000" : "#fff" },
        kind.toUpperCase() + (count > 1 ? count : "")),
      s("title", {}, `${describeToken(token)} ×${count}${used ? ` (${used} already carried this turn)` : ""}`),
    ));
  });
  return out;
}

function draw(ctx, sel) {
  return h("div", { class: "gt-map" }, drawMap(ctx, sel));
}

// ------------------------------------------------------------------ other routes

const LAND = new Set(MAP.land.map(key));

/** Land hexes next to "col,row" (odd-r offset layout, as drawn): geometry only. */
function landNeighbours(k) {
  const [c, r] = k.split(",").map(Number);
  const steps = r & 1
    ? [[1, 0], [-1, 0], [0, -1], [1, -1], [0, 1], [1, 1]]
    : [[1, 0], [-1, 0], [-1, -1], [0, -1], [-1, 1], [0, 1]];
  return steps.map(([dc, dr]) => `${c + dc},${r + dr}`).filter((n) => LAND.has(n));
}

/**
 * While a statue and a destination are chosen: "Choose another route", then the
 * neighbouring hexes to step to (buttons), until the destination; the transport is
 * sent along that path with default pieces. The page checks no rules: a path the
 * engine refuses comes back as the server's error message.
 */
function routeTool(ctx, api, sel) {
  const own = api.own;
  const st = sel ? sel.chosen.find((t) => t.key.startsWith("st:")) : null;
  const to = sel ? sel.chosen.find((t) => t.key.startsWith("to:")) : null;
  const statue = st && ctx.view.statues ? ctx.view.statues[st.key.slice(3)] : null;
  if (!st || !to || !statue || statue.hex == null) {
    own.route = null;
    return null;
  }
  const sid = st.key.slice(3);
  const dest = to.key.slice(3);
  const route = own.route && own.route.sid === sid && own.route.dest === dest ? own.route : null;
  if (!route) {
    return h("div", { class: "gt-route" },
      h("button", { type: "button", id: "route-start", disabled: api.pending,
        onclick: () => { own.route = { sid, dest, cells: [statue.hex] }; api.rerender(); } }, "Choose another route"));
  }
  const last = route.cells[route.cells.length - 1];
  const steps = last === dest ? [] : landNeighbours(last).filter((n) => !route.cells.includes(n));
  const text = `transport ${sid} ${route.cells.map((c) => `(${c})`).join(">")}`;
  return h("div", { class: "gt-route", "aria-live": "polite" },
    h("div", { id: "route-path" }, `Route of ${sid}: ${route.cells.map((c) => `(${c})`).join(" → ")}`),
    steps.length ? h("div", {}, "Next hex: ", ...steps.map((n) => h("button", {
      type: "button", class: "gt-choice", "data-route-hex": n, disabled: api.pending,
      onclick: () => { route.cells.push(n); api.rerender(); },
    }, `(${n})${n === dest ? " (destination)" : ""}`))) : null,
    h("button", { type: "button", id: "route-send", class: "primary", disabled: api.pending || last !== dest,
      onclick: () => { own.route = null; api.send(text); } }, `Transport ${sid} along this route`),
    h("button", { type: "button", id: "route-undo", disabled: api.pending || route.cells.length < 2,
      onclick: () => { route.cells.pop(); api.rerender(); } }, "Undo a hex"),
    h("button", { type: "button", id: "route-cancel", disabled: api.pending,
      onclick: () => { own.route = null; api.rerender(); } }, "Cheapest route instead"));
}

const spec = {
  game: "giants",
  tokenize,
  status,
  draw,
  extra: (ctx, api, sel) => [bidForm(ctx, api), routeTool(ctx, api, sel)],
  detail: (ctx, action) => transportDetail(ctx, action),
  after: (ctx, sel) => panels(ctx, sel),
  retryStale: (text) => text.startsWith("bid "),
};

export function render(container, ctx) {
  renderBoard(container, ctx, spec);
}

export { destroy, tokenize };
