// GIANTS panels beside the map: this seat's private screen, the public table (who has
// bid, the revealed bids, what stands in front of each screen, points), the offer,
// the statues, the sealed bid form and the transport preview.

import { SEAT_COLOURS, h, seatName, who } from "./ui.js";
import { MAP, describeToken } from "./giants-data.js";

const swatch = (seat) => h("span", { class: "gt-swatch", style: `background:${SEAT_COLOURS[seat]}` });

function bidText(bid) {
  if (!bid) return "—";
  const [m, w, c] = bid;
  return `${m} marker(s), ${w} worker(s)${c ? " + chief" : ""}`;
}

/** Seats that have answered the current simultaneous step: the room's `answered` when the
 * server sends it, else the engine's public `bid_made` flags. Never what they bid. */
function hasBid(ctx, seat) {
  const answered = ctx.room && ctx.room.answered;
  if (Array.isArray(answered)) return answered.includes(seat);
  const p = ctx.view.seats[String(seat)];
  return !!(p && p.bid_made);
}

function statueChip(ctx, sid) {
  const st = ctx.view.statues[sid];
  const what = st.kind === "H" ? "headdress" : `Moai ${st.size}`;
  const mark = st.marker != null ? `, marker of ${seatName(ctx, st.marker)}` : "";
  return h("button", { type: "button", class: "gt-statue-chip", "data-target": `statue:${sid}`, tabindex: -1 },
    `${sid} (${what}${mark})`);
}

function screenPanel(ctx) {
  const v = ctx.view;
  if (!v.screen) return null;
  const sc = v.screen;
  return h("section", { class: "gt-panel gt-private", "aria-label": "Your screen" },
    h("h3", {}, "Behind your screen (only you see this)"),
    h("div", {}, `${sc.workers} worker(s), chief ${sc.chief ? "here" : "out"}, sorcerer ${sc.sorcerer ? "here" : "out"}`),
    h("div", {}, `${sc.markers} marker(s), ${sc.tablets} half-tablet(s), ${sc.logs} log(s), ${sc.bases} base(s)`),
    v.phase === "auction" ? h("div", { class: "gt-my-bid" }, "Your sealed bid: ", v.my_bid ? bidText(v.my_bid) : "none yet") : null,
  );
}

function tablePanel(ctx) {
  const v = ctx.view;
  const rows = [];
  for (let seat = 0; seat < v.players; seat++) {
    const p = v.seats[String(seat)];
    let bid;
    if (v.phase === "auction") bid = hasBid(ctx, seat) ? "has bid ✓" : "thinking…";
    else bid = p.bid ? bidText(p.bid) : "—";
    const front = [];
    if (p.front_markers) front.push(`${p.front_markers} marker(s)`);
    if (p.front_workers) front.push(`${p.front_workers} sculptor worker(s)${p.spent_workers ? ` (${p.spent_workers} used)` : ""}`);
    if (p.front_chief) front.push(`chief${p.spent_chief ? " (used)" : ""}`);
    const statues = Object.entries(v.statues || {}).filter(([, st]) => st.front === seat).map(([sid]) => statueChip(ctx, sid));
    const screen = v.screens && v.screens[String(seat)];
    rows.push(h("tr", { "data-seat": seat, class: (ctx.room && (ctx.room.to_act || []).includes(seat)) ? "gt-to-act" : null },
      h("td", {}, swatch(seat), who(ctx, seat), seat === v.first ? " ★" : "", p.passed ? " (passed)" : ""),
      h("td", { class: "gt-points" }, String(p.points),
        ctx.outcome ? h("div", { class: "gt-final" }, `final ${ctx.outcome.scores[seat]}${(ctx.outcome.winners || []).includes(seat) ? " — wins" : ""}`) : null),
      h("td", { class: "gt-bid", "data-seat-bid": seat }, bid),
      h("td", {}, front.join(", ") || "—", statues.length ? h("div", {}, statues) : null),
      h("td", {}, `${p.reserve_workers} w / ${p.reserve_markers} m`, p.looked.length ? ` · looked: ${p.looked.join(" ")}` : "",
        screen ? h("div", {}, `screen: ${screen.workers}w ${screen.markers}m ${screen.tablets}t ${screen.logs}l ${screen.bases}b`) : null),
    ));
  }
  return h("section", { class: "gt-panel gt-table-panel", "aria-label": "The table" },
    h("h3", {}, "Tribes"),
    h("table", { class: "gt-seat-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "tribe"), h("th", {}, "points", ctx.outcome ? " / score" : ""), h("th", {}, "bid"),
        h("th", {}, "in front of the screen"), h("th", {}, "reserve"))),
      h("tbody", {}, rows)),
    v.order && v.order.length ? h("div", {}, "Choice order: ", v.order.map((s) => seatName(ctx, s)).join(" → ")) : null,
  );
}

function offerPanel(ctx) {
  const v = ctx.view;
  const sizes = ["1", "2", "3"].map((n) =>
    h("button", { type: "button", class: "gt-offer", "data-target": `offer:${n}`, tabindex: -1 },
      `size ${n}: ${v.offer[n]} offered`));
  return h("section", { class: "gt-panel", "aria-label": "Quarry" },
    h("h3", {}, "Quarry offer"),
    h("div", {}, sizes),
    h("div", {}, `stock ${v.stock["1"]}/${v.stock["2"]}/${v.stock["3"]} · half-tablets ${v.tablets} · headdresses ${v.headdresses}`,
      v.players === 2 ? ` · neutral workers ${v.neutrals}` : ""),
  );
}

function statuesPanel(ctx) {
  const v = ctx.view;
  const byHex = {};
  for (const [sid, st] of Object.entries(v.statues || {})) {
    if (st.front != null) continue;
    (byHex[st.hex] = byHex[st.hex] || []).push(sid);
  }
  const places = Object.keys(byHex).sort();
  if (!places.length) return null;
  const name = (k) => (k === `${MAP.quarry[0]},${MAP.quarry[1]}` ? "quarry" : k === `${MAP.clay_pit[0]},${MAP.clay_pit[1]}` ? "clay pit" : k);
  return h("section", { class: "gt-panel", "aria-label": "Statues on the island" },
    h("h3", {}, "Statues on the island"),
    places.map((k) => h("div", {}, `(${k}) ${name(k)}: `, byHex[k].map((sid) => statueChip(ctx, sid)))),
  );
}

function eventsPanel(ctx) {
  const lines = [];
  for (const e of ctx.events || []) {
    if (e.type === "bids_revealed") {
      lines.push(`Bids revealed: ${Object.entries(e.bids).map(([s, b]) => `${seatName(ctx, Number(s))} ${bidText(b)}`).join("; ")}`);
    } else if (e.type === "transport") {
      const pts = Object.entries(e.points || {}).map(([s, p]) => `${seatName(ctx, Number(s))} +${p}`).join(", ");
      lines.push(`${seatName(ctx, e.seat)} carried ${e.statue} ${e.path.map((p) => `(${p})`).join("→")} with ${
        e.uses.map((u) => u.map((x) => describeToken(x, (s) => seatName(ctx, s))).join(" + ")).join("; ")}${pts ? ` — points: ${pts}` : ""}`);
    } else if (e.type === "claim") {
      lines.push(`${seatName(ctx, e.seat)} claimed ${e.statue} (size ${e.size}) with ${e.chief ? "the chief" : "workers"}`);
    } else if (e.type === "erect") {
      lines.push(`${e.statue} erected on ${e.ahu}`);
    } else if (e.type === "game_over") {
      lines.push(`Game over: ${e.reason}`);
    }
  }
  if (!lines.length) return null;
  return h("section", { class: "gt-panel gt-events", "aria-label": "Latest events" }, h("h3", {}, "Just now"), lines.map((l) => h("div", {}, l)));
}

export function panels(ctx) {
  return h("div", { class: "gt-panels" },
    screenPanel(ctx), tablePanel(ctx), offerPanel(ctx), statuesPanel(ctx), eventsPanel(ctx));
}

// ------------------------------------------------------------------ the sealed bid

function parseBid(text) {
  const m = /^bid (\d+)(?: w(\d+))?( c)?$/.exec(text.trim());
  return m ? { markers: Number(m[1]), workers: Number(m[2] || 0), chief: !!m[3] } : null;
}

export function formatBid(b) {
  return `bid ${b.markers}${b.workers ? ` w${b.workers}` : ""}${b.chief ? " c" : ""}`;
}

/** The sealed bid form: markers, workers and chief, limited to what the legal bids allow. */
export function bidForm(ctx, api) {
  const bids = (ctx.legal || []).map(parseBid).filter(Boolean);
  if (ctx.view.phase !== "auction" || !bids.length) return null;
  const legal = new Set(bids.map(formatBid));
  const max = (f) => Math.max(...bids.map((b) => Number(b[f])));
  const own = api.own;
  if (!own.bid || own.bidTurn !== ctx.view.turn) {
    const mine = ctx.view.my_bid;
    own.bid = mine ? { markers: mine[0], workers: mine[1], chief: !!mine[2] } : { markers: 0, workers: 0, chief: false };
    own.bidTurn = ctx.view.turn;
  }
  const b = own.bid;
  const number = (id, label, field) => h("label", {}, label,
    h("select", { id, name: field, disabled: api.pending, onchange: (ev) => { b[field] = Number(ev.target.value); } },
      Array.from({ length: max(field) + 1 }, (_, i) => h("option", { value: i, selected: i === b[field] }, String(i)))));
  const chiefAllowed = bids.some((x) => x.chief);
  return h("form", {
    class: "gt-form gt-bid-form", "aria-label": "Sealed bid",
    onsubmit: (ev) => {
      ev.preventDefault();
      const text = formatBid(b);
      if (legal.has(text)) api.send(text);
    },
  },
  h("strong", {}, ctx.view.my_bid ? "Replace your sealed bid:" : "Your sealed bid:"),
  number("gt-bid-markers", "markers", "markers"),
  number("gt-bid-workers", "sculptor workers", "workers"),
  chiefAllowed ? h("label", {}, h("input", {
    id: "gt-bid-chief", type: "checkbox", name: "chief", checked: b.chief, disabled: api.pending,
    onchange: (ev) => { b.chief = ev.target.checked; },
  }), "chief sculpts") : null,
  h("button", { type: "submit", id: "gt-bid-submit", disabled: api.pending }, ctx.view.my_bid ? "Replace bid" : "Seal bid"),
  h("span", { class: "gt-hint" }, "Nobody sees it before every tribe has bid."),
  );
}

// ------------------------------------------------------------------ transport preview

function unitKey(token, mover, players) {
  const kind = token[0];
  const owner = token.length > 1 ? Number(token.slice(1)) : null;
  if (kind === "l") return [0, 0, 1, 0];
  if (owner == null || (kind === "n" && owner === mover)) return [0, 0, 0, 1];
  if (owner === mover) return [0, 1, 0, kind === "s" ? 2 : 3];
  const rel = (((owner - mover) % players) + players) % players;
  return [1, 0, 0, 10 + rel * 4 + "nws".indexOf(kind)];
}

function cmp(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] === undefined) return -1;
    if (b[i] === undefined) return 1;
    if (Array.isArray(a[i])) {
      const c = cmp(a[i], b[i]);
      if (c) return c;
    } else if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

/**
 * The pieces the server uses by default to enter a hex (GI-18's preference: fewest
 * points to opponents, then fewest own figures, logs, pieces) — shown before a
 * transport is sent; the server applies the same choice and reports it in its event.
 */
export function defaultUse(tokens, mover, size, players) {
  const figureHere = Object.keys(tokens).some((t) => "wscn".includes(t[0]));
  const units = [];
  const options = [];
  for (const [token, [count, used]] of Object.entries(tokens)) {
    const free = count - used;
    if (free <= 0 || (token === "l" && !figureHere)) continue;
    if (token[0] === "c") {
      const own = Number(token.slice(1)) === mover;
      options.push([[own ? 0 : size, own ? 1 : 0, 0, 1], 1, [token]]);
      continue;
    }
    const k = unitKey(token, mover, players);
    for (let i = 0; i < Math.min(free, size); i++) units.push([k, token]);
  }
  if (units.length >= size) {
    units.sort((a, b) => cmp(a[0], b[0]) || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    const chosen = units.slice(0, size);
    const sum = (i) => chosen.reduce((n, [k]) => n + k[i], 0);
    options.push([[sum(0), sum(1), sum(2), size], 0, chosen.map(([, t]) => t)]);
  }
  if (!options.length) return null;
  options.sort(cmp);
  return options[0][2];
}

/** Path, strength needed per entered hex and whose pieces carry it, for a transport. */
export function transportDetail(ctx, action) {
  const words = action.text.split(/\s+/);
  if (words[0] !== "transport") return null;
  const v = ctx.view;
  const sid = words[1];
  const st = v.statues[sid];
  const cells = words[2].split(">").map((p) => p.split("=")[0].replace(/[()]/g, ""));
  const rows = cells.slice(1).map((cell) => {
    const use = defaultUse((v.board || {})[cell] || {}, ctx.seat, st.size, v.players) || [];
    const pts = use.filter((t) => t.length > 1 && Number(t.slice(1)) !== ctx.seat && t[0] !== "l");
    return h("li", { "data-hex": cell },
      `(${cell}): needs strength ${st.size} — `,
      use.map((x) => describeToken(x, (s) => seatName(ctx, s))).join(" + ") || "?",
      pts.length ? ` (scores for ${[...new Set(pts.map((t) => seatName(ctx, Number(t.slice(1)))))].join(", ")})` : "");
  });
  return h("div", { class: "gt-transport-detail" },
    h("div", {}, `${sid} (${st.kind === "H" ? "headdress, size 1" : `Moai, size ${st.size}`}) along ${cells.map((c) => `(${c})`).join(" → ")}:`),
    h("ul", {}, rows));
}
