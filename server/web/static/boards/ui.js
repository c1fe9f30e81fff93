// What every board shares: DOM and SVG builders, the action bar driven by the prefix
// picker, click and keyboard handling of targets, sending an action and showing the
// server's refusal. A board module supplies a `spec`:
//
//   game                 the engine name (CSS class gt-<game>)
//   tokenize(text, ctx)  the parts of one legal action (see picker.js), or null to leave
//                        it to a form of the board's own (GIANTS bids)
//   status(ctx)          an element: whose turn, scores, round, last move
//   draw(ctx, sel)       the board (and panels); elements carrying `data-target` become
//                        click targets when the picker offers them. `sel` tells what is
//                        selected: {targets: Set of chosen target ids, options, prefix}
//   extra(ctx, api, sel)? optional element under the action bar (api.send(text), api.own: a
//                        per-board object kept across renders, api.rerender()); `sel` as for draw
//   detail(ctx, action)? optional element shown while a `confirm` step waits
//   after(ctx, sel)?     optional element under all that (GIANTS: the table's panels)
//   retryStale(text)?    true for actions to send again after a stale_version refusal
//                        (a sealed bid does not depend on the others' answers)

import { Picker } from "./picker.js";

const SVG_NS = "http://www.w3.org/2000/svg";

/** An HTML element: h("div", {class: "x", onclick: f}, child, "text", [more]). */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element, same calling convention as h. */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** The display name of a seat. */
export function seatName(ctx, seat) {
  if (seat == null) return "nobody";
  const n = (ctx.names && ctx.names[seat]) ||
    (ctx.room && ctx.room.seats && ctx.room.seats[seat] && ctx.room.seats[seat].name);
  return n || `seat ${seat}`;
}

/** "ann (you)" style label. */
export function who(ctx, seat) {
  return seatName(ctx, seat) + (ctx.seat === seat ? " (you)" : "");
}

/** A status line "label: value" as a definition-like row. */
export function stat(label, ...value) {
  return h("div", { class: "gt-stat" }, h("span", { class: "gt-stat-label" }, label), " ", ...value);
}

export function lastMoveText(ctx) {
  if (ctx.lastMove && ctx.lastMove.action) {
    return `${seatName(ctx, ctx.lastMove.seat)}: ${ctx.lastMove.action}`;
  }
  const lm = ctx.view && ctx.view.last_move; // Giantslayer and Tara also keep it in the view
  return lm || "—";
}

const boards = new WeakMap();
const wired = new WeakSet(); // containers that have our listeners (they outlive destroy)

function stateOf(container) {
  let st = boards.get(container);
  if (!st) {
    st = { picker: new Picker(), menu: null, pending: false, message: null, ctx: null, spec: null, own: {}, sent: 0, seq: 0, answeredAt: -1 };
    boards.set(container, st);
  }
  if (!wired.has(container)) {
    wired.add(container);
    container.addEventListener("click", (ev) => onActivate(container, ev));
    container.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") {
        const now = boards.get(container);
        if (now && !now.pending && (now.picker.prefix.length || now.menu)) {
          now.menu = null;
          now.picker.reset();
          rerender(container);
        }
        return;
      }
      if (ev.key !== "Enter" && ev.key !== " ") return;
      const el = ev.target.closest && ev.target.closest("[data-target].gt-target");
      if (el && el.tagName !== "BUTTON") {
        ev.preventDefault();
        onActivate(container, ev);
      }
    });
  }
  return st;
}

function onActivate(container, ev) {
  const st = boards.get(container);
  if (!st || st.pending) return;
  const button = ev.target.closest("[data-choose],[data-cmd]");
  if (button && container.contains(button)) {
    if (button.dataset.cmd === "back") {
      st.menu = null;
      st.picker.back();
    } else if (button.dataset.cmd === "cancel") {
      st.menu = null;
      st.picker.reset();
    } else if (button.dataset.cmd === "done") {
      const action = st.picker.complete();
      if (action) return send(container, st, action.text);
    } else if (button.dataset.choose != null) {
      st.menu = null;
      const text = st.picker.choose(button.dataset.choose);
      if (text) return send(container, st, text);
    }
    st.message = null;
    return rerender(container);
  }
  const el = ev.target.closest("[data-target].gt-target");
  if (!el || !container.contains(el)) return;
  const id = el.dataset.target;
  const opts = st.picker.options().filter((o) => o.target === id);
  st.message = null;
  if (opts.length === 1) {
    st.menu = null;
    const text = st.picker.choose(opts[0].key);
    if (text) return send(container, st, text);
  } else if (opts.length > 1) {
    st.menu = id;
  }
  rerender(container);
}

/** Forget the board state kept for `container` (the shell reuses it for another room). */
export function destroy(container) {
  boards.delete(container);
  container.replaceChildren();
}

/** Send an action text for the seat; show "sending", then the server's refusal if any. */
export function send(container, st, text) {
  st = st || boards.get(container);
  st.pending = true;
  st.sent += 1;
  st.menu = null;
  st.message = { kind: "info", text: `sending ${text}…` };
  rerender(container);
  return Promise.resolve()
    .then(() => st.ctx.act(text))
    .then(
      () => {
        st.pending = false;
        st.retry = null;
        st.answeredAt = st.seq; // the position this action leads to comes in a later ctx
        st.message = null;
        st.picker.reset();
        rerender(container);
      },
      (err) => {
        st.pending = false;
        if (err && err.code === "stale_version" && st.spec.retryStale && st.spec.retryStale(text) && st.retry !== text) {
          // Another seat's answer reached the room first (its patch came before this
          // refusal, so the page is at the new version now); this action does not depend
          // on it (a sealed bid): send it again, once.
          st.retry = text;
          return send(container, st, text);
        }
        st.retry = null;
        st.picker.reset();
        const code = err && err.code ? `${err.code}: ` : "";
        st.message = { kind: "error", text: code + ((err && err.message) || String(err)) };
        rerender(container);
      },
    );
}

/**
 * The parts of `text` as the board in `container` reads them (tests use it to know
 * which targets and buttons to press for a legal action): [{key, target, label}].
 */
export function planFor(container, text) {
  const st = boards.get(container);
  if (!st) return null;
  const tokens = st.spec.tokenize(text, st.ctx);
  return tokens && tokens.map(({ key, target, label, confirm }) => ({ key, target, label, confirm: !!confirm }));
}

/** What the board in `container` shows now (tests poll it): legal list, view, status. */
export function boardState(container) {
  const st = boards.get(container);
  if (!st || !st.ctx) return null;
  const c = st.ctx;
  return {
    legal: c.legal || [], view: c.view, status: c.room && c.room.status, seat: c.seat,
    pending: st.pending, sent: st.sent, prefix: st.picker.prefix.length,
    seq: st.seq, answeredAt: st.answeredAt,
  };
}

function rerender(container) {
  const st = boards.get(container);
  if (st && st.ctx) draw(container, st);
}

/** Render `spec`'s board for `ctx` into `container` (idempotent; keeps the selection). */
export function renderBoard(container, ctx, spec) {
  const st = stateOf(container);
  st.ctx = ctx;
  st.spec = spec;
  st.seq += 1;
  draw(container, st);
}

function draw(container, st) {
  const { ctx, spec } = st;
  const legal = ctx.legal || [];
  const actions = [];
  for (const text of legal) {
    const tokens = spec.tokenize(text, ctx);
    if (tokens && tokens.length) actions.push({ text, tokens });
  }
  st.picker.sync(actions, legal.join("\n"));
  const options = st.picker.options();
  if (st.menu && !options.some((o) => o.target === st.menu)) st.menu = null;
  const chosen = st.picker.chosen();
  const sel = {
    prefix: st.picker.prefix,
    chosen,
    targets: new Set(chosen.map((t) => t.target).filter((t) => t != null)),
    options,
    menu: st.menu,
  };
  const focusKey = document.activeElement && container.contains(document.activeElement)
    ? focusId(document.activeElement) : null;

  const root = h("div", { class: `gt-board gt-${spec.game}`, "data-board": spec.game, "data-prefix-len": st.picker.prefix.length,
    "data-sent": st.sent,
    "data-pending": st.pending ? "1" : null },
    h("div", { class: "gt-status" }, spec.status(ctx)),
    h("div", { class: "gt-main" }, spec.draw(ctx, sel)),
    actionBar(ctx, st, spec, sel),
    spec.extra ? spec.extra(ctx, {
      send: (t) => send(container, st, t), pending: st.pending, own: st.own, rerender: () => rerender(container),
    }, sel) : null,
    spec.after ? spec.after(ctx, sel) : null,
  );
  markTargets(root, sel, st);
  container.replaceChildren(root);
  if (focusKey) {
    const again = root.querySelector(focusKey);
    if (again) again.focus({ preventScroll: true });
  }
}

function focusId(el) {
  if (el.dataset && el.dataset.target) return `[data-target="${CSS.escape(el.dataset.target)}"]`;
  if (el.dataset && el.dataset.choose != null) return `[data-choose="${CSS.escape(el.dataset.choose)}"]`;
  if (el.dataset && el.dataset.cmd) return `[data-cmd="${CSS.escape(el.dataset.cmd)}"]`;
  if (el.id) return `#${CSS.escape(el.id)}`;
  return null;
}

function markTargets(root, sel, st) {
  const byTarget = new Map();
  for (const o of sel.options) {
    if (o.target == null) continue;
    if (!byTarget.has(o.target)) byTarget.set(o.target, []);
    byTarget.get(o.target).push(o);
  }
  for (const el of root.querySelectorAll("[data-target]")) {
    const id = el.dataset.target;
    if (sel.targets.has(id)) el.classList.add("gt-selected");
    if (id === sel.menu) el.classList.add("gt-menu-open");
    const opts = byTarget.get(id);
    if (!opts || st.pending) continue;
    el.classList.add("gt-target");
    if (el.tagName !== "BUTTON") {
      el.setAttribute("tabindex", "0");
      el.setAttribute("role", "button");
    }
    let label = opts.map((o) => o.label).join(" or ");
    if (opts.length === 1) {
      // One click completes a move: say which (tests and screen readers use it).
      const trial = new Picker();
      trial.actions = st.picker.actions;
      trial.prefix = [...st.picker.prefix];
      const text = trial.choose(opts[0].key);
      if (text) {
        el.dataset.action = text;
        label += ` (${text})`;
      }
    }
    el.setAttribute("aria-label", label);
    if (el.tagName !== "BUTTON" && !el.querySelector("title")) {
      const title = el.namespaceURI === SVG_NS ? s("title", {}) : null;
      if (title) {
        title.textContent = opts.map((o) => o.label).join(" / ");
        el.prepend(title);
      }
    }
  }
}

function actionBar(ctx, st, spec, sel) {
  const bar = h("div", { class: "gt-actions", "aria-live": "polite" });
  const done = st.picker.complete();
  if (sel.prefix.length) {
    bar.append(h("span", { class: "gt-chosen" }, "Selected: ", sel.chosen.map((t) => t.label).join(" → ")));
  }
  let offered = sel.options.filter((o) => o.target == null);
  if (sel.menu) {
    bar.append(h("span", { class: "gt-menu-label" }, "Choose: "));
    offered = sel.options.filter((o) => o.target === sel.menu);
  }
  for (const o of offered) {
    bar.append(h("button", { type: "button", class: "gt-choice", "data-choose": o.key, disabled: st.pending }, o.label));
  }
  if (done && sel.options.length) {
    bar.append(h("button", { type: "button", class: "gt-done", "data-cmd": "done", disabled: st.pending },
      done.tokens[done.tokens.length - 1].doneLabel || "Done"));
  }
  if (done && spec.detail) bar.append(spec.detail(ctx, done));
  else if (sel.prefix.length && spec.detail && sel.options.length === 1 && sel.options[0].confirm) {
    bar.append(spec.detail(ctx, sel.options[0].actions[0]));
  }
  if (sel.prefix.length || sel.menu) {
    bar.append(
      h("button", { type: "button", class: "gt-back", "data-cmd": "back", disabled: st.pending || !sel.prefix.length }, "Back"),
      h("button", { type: "button", class: "gt-cancel", "data-cmd": "cancel", disabled: st.pending }, "Cancel"),
    );
  }
  if (!sel.prefix.length && !sel.menu && (ctx.legal || []).length && sel.options.some((o) => o.target != null)) {
    bar.append(h("span", { class: "gt-hint" }, "Your move: pick a highlighted place."));
  }
  if (st.message) {
    bar.append(h("div", { class: `gt-message gt-${st.message.kind}`, role: st.message.kind === "error" ? "alert" : "status" },
      st.message.text));
  }
  return bar;
}

// ---------------------------------------------------------------- hex geometry

export const SQRT3 = Math.sqrt(3);

/** Pixel centre of axial (q, r) on a pointy-top layout with hex radius `size`. */
export function axialToPixel(q, r, size) {
  return [size * SQRT3 * (q + r / 2), size * 1.5 * r];
}

/** Pixel centre of odd-r offset (col, row), pointy-top. */
export function offsetToPixel(col, row, size) {
  return [size * SQRT3 * (col + 0.5 * (row & 1)), size * 1.5 * row];
}

/** The `points` attribute of a pointy-top hexagon. */
export function hexPoints(x, y, size) {
  const pts = [];
  for (let i = 0; i < 6; i++) {
    const a = (Math.PI / 180) * (60 * i - 30);
    pts.push(`${(x + size * Math.cos(a)).toFixed(2)},${(y + size * Math.sin(a)).toFixed(2)}`);
  }
  return pts.join(" ");
}

/** An <svg> sized by a viewBox around points [x, y] with a margin. */
export function svgFor(points, margin, attrs, ...children) {
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const minX = Math.min(...xs) - margin;
  const minY = Math.min(...ys) - margin;
  const w = Math.max(...xs) - Math.min(...xs) + 2 * margin;
  const hgt = Math.max(...ys) - Math.min(...ys) + 2 * margin;
  return s("svg", {
    viewBox: `${minX.toFixed(1)} ${minY.toFixed(1)} ${w.toFixed(1)} ${hgt.toFixed(1)}`,
    class: "gt-svg", role: "group", ...attrs,
  }, ...children);
}

/** Seat colours for up to five tribes (also used for White/Black where it helps). */
export const SEAT_COLOURS = ["#c0392b", "#2e6fd8", "#2e9d4f", "#d89a1c", "#8e44ad"];
