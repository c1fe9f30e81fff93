// The room page (#/room/ID): resume this browser's seat (token in localStorage), or
// watch and offer the free seats (asking for the password when the room has one);
// then the header, the board, the notation box with the legal list, the event log,
// the deadline countdown and the result screen.

import { boardFor } from "../boards/index.js";
import { clock, h } from "./dom.js";
import { gameTitle } from "./lobby.js";
import { ServerError } from "./protocol.js";
import { forgetSeat, getSeat, setSeat } from "./storage.js";
import { describeEvent, outcomeText } from "./text.js";

const MAX_LEGAL_SHOWN = 300;

export function showRoom(app, client, roomId) {
  let closed = false;
  let board = null;
  let boardGame = null;
  let tick = null;
  let password = null;
  const wantsJoin = location.hash.endsWith("?join");
  roomId = roomId.replace(/\?.*$/, "");

  const status = h("p", { class: "muted", role: "status", "aria-live": "polite" }, "Opening the room…");
  const page = h("div", { class: "room-page", "data-room": roomId }, status);
  app.append(page);

  const onRoom = (ev) => {
    if (ev.detail.room === roomId) render(ev.detail);
  };
  const onRoomError = (ev) => {
    if (ev.detail.room !== roomId) return;
    // A reconnect could not take the room back (token refused, room gone).
    const err = ev.detail.error;
    if (err.code === "bad_token") forgetSeat(roomId);
    status.textContent = `Lost the room: ${err.message}`;
  };
  client.addEventListener("room", onRoom);
  client.addEventListener("roomerror", onRoomError);

  // -- entering the room --------------------------------------------------------

  async function enter() {
    await client.ready;
    if (closed) return;
    const saved = getSeat(roomId);
    if (saved?.token) {
      try {
        await client.resume(roomId, saved.token);
        return;
      } catch (err) {
        if (!(err instanceof ServerError) || err.code !== "bad_token") return fail(err);
        forgetSeat(roomId); // the seat is gone (room restarted or finished): watch instead
      }
    }
    await watch();
  }

  async function watch() {
    try {
      await client.watch(roomId, { password: password ?? undefined });
    } catch (err) {
      if (err instanceof ServerError && err.code === "bad_password") return askPassword(password !== null);
      return fail(err);
    }
  }

  async function fail(err) {
    if (closed) return;
    if (err instanceof ServerError && err.code === "no_such_room") {
      // A finished room leaves the live rooms but stays readable as a replay.
      try {
        await client.request("replay", { room: roomId });
        if (!closed) location.replace(`#/replay/${roomId}`);
        return;
      } catch {
        // really gone
      }
    }
    if (closed) return;
    const text = err instanceof ServerError && err.code === "no_such_room"
      ? `There is no room ${roomId} (it may have finished and expired).`
      : `Could not open the room: ${err.message ?? err}`;
    page.replaceChildren(h("section", { class: "panel" }, h("p", { class: "error", role: "alert" }, text),
      h("p", {}, h("a", { href: "#/" }, "Back to the lobby"))));
  }

  function askPassword(wrong) {
    if (closed) return;
    const input = h("input", { type: "password", id: "room-password", maxlength: 128, autocomplete: "current-password", required: true });
    const form = h("form", { class: "panel password-form", id: "password-form" },
      h("h1", {}, `Room ${roomId}`),
      h("p", {}, "This room needs a password."),
      wrong ? h("p", { class: "error", role: "alert" }, "Wrong password.") : null,
      h("div", { class: "field" }, h("label", { for: "room-password" }, "Password"), input),
      h("button", { type: "submit", class: "primary" }, "Enter"),
      " ", h("a", { href: "#/" }, "Back to the lobby"));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      password = input.value;
      page.replaceChildren(status);
      watch();
    });
    page.replaceChildren(form);
    input.focus();
  }

  async function join(seat) {
    try {
      const data = await client.join(roomId, { seat, password: password ?? undefined });
      setSeat(roomId, data.seat, data.token);
      render({ kind: "seat" });
    } catch (err) {
      showError(err);
    }
  }

  // -- the page -----------------------------------------------------------------

  const els = {};
  function build() {
    els.title = h("h1", { class: "room-title" });
    els.conn = h("span", { class: "room-conn" });
    els.seats = h("ul", { class: "seat-list", id: "seat-list", "aria-label": "players" });
    els.turn = h("p", { class: "turn", id: "turn", "aria-live": "polite" });
    els.deadline = h("p", { class: "deadline", id: "deadline", role: "timer", "aria-live": "off" });
    els.joinBox = h("div", { class: "join-box", id: "join-box" });
    els.result = h("section", { class: "result", id: "result", hidden: true, "aria-live": "polite" });
    els.board = h("div", { class: "board", id: "board" });
    els.error = h("p", { class: "error", id: "move-error", role: "alert" });
    els.input = h("input", { id: "move-input", list: "legal-moves", autocomplete: "off", spellcheck: "false", maxlength: 1024, "aria-describedby": "move-error" });
    els.datalist = h("datalist", { id: "legal-moves" });
    els.legal = h("ul", { class: "legal", id: "legal-list" });
    els.legalCount = h("summary", {}, "Legal moves");
    els.moveForm = h("form", { class: "move-form", id: "move-form" },
      h("label", { for: "move-input" }, "Move (notation)"),
      h("div", { class: "row" }, els.input, h("button", { type: "submit", class: "primary" }, "Play")),
      els.datalist, els.error,
      h("details", { class: "legal-box" }, els.legalCount, els.legal));
    els.moveForm.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const text = els.input.value.trim();
      if (text) act(text).then(() => (els.input.value = "")).catch(() => {});
    });
    els.log = h("ul", { class: "event-log", id: "event-log", "aria-label": "events, newest first" });
    els.controls = h("div", { class: "room-controls" });
    page.replaceChildren(
      h("header", { class: "room-header panel" }, els.title, els.seats, els.turn, els.deadline, els.joinBox, els.controls),
      els.result,
      h("div", { class: "room-body" },
        h("section", { class: "board-area", "aria-label": "board" }, els.board),
        h("aside", { class: "side" },
          els.movePanel = h("section", { class: "panel" }, els.moveForm),
          h("section", { class: "panel" }, h("h2", {}, "Events ", h("small", { class: "muted" }, "(newest first)")), els.log))));
  }

  function showError(err) {
    if (!els.error) return;
    els.error.textContent = err.message ? `${err.message}${err.code ? ` (${err.code})` : ""}` : String(err);
  }

  function act(text) {
    const room = client.rooms.get(roomId);
    if (!room || room.seat === null) {
      const err = { code: "not_seated", message: "you are watching: take a seat to play" };
      showError(err);
      return Promise.reject(err);
    }
    els.error.textContent = "";
    return client.act(roomId, text).catch((err) => {
      showError(err);
      throw { code: err.code, message: err.message };
    });
  }

  function names(view) {
    return view.room.seats.map((s) => s.name ?? `seat ${s.seat + 1}`);
  }

  function render(detail) {
    if (closed) return;
    const room = client.rooms.get(roomId);
    if (!room || !room.view) return;
    if (!els.board) build();
    const view = room.view;
    const r = view.room;
    const seatNames = names(view);
    const me = room.seat;
    document.title = `${gameTitle(client.games, r.game)} · ${roomId} · Giants Table`;
    els.title.replaceChildren(`${gameTitle(client.games, r.game)} `, h("span", { class: "muted" }, `${r.rules} · room ${roomId}`));
    els.seats.replaceChildren(...r.seats.map((s) => h("li", {
      class: ["seat-item", r.to_act?.includes(s.seat) ? "to-act" : "", s.seat === me ? "me" : "", s.name ? "" : "free"].join(" "),
      "data-seat": s.seat,
      style: `--seat: var(--seat-${s.seat % 8})`,
    }, h("span", { class: "dot", "aria-hidden": "true" }),
    `${s.name ?? "free"}${s.bot ? " (bot)" : ""}${s.seat === me ? " — you" : ""}`,
    s.name && !s.connected && !s.bot ? h("span", { class: "muted" }, " (away)") : null,
    // A simultaneous step (GIANTS bids): who has answered, never what.
    (r.answered ?? []).includes(s.seat) ? h("span", { class: "answered", title: "has answered" }, " ✓ answered") : null)));

    // Whose turn
    if (r.status === "waiting") {
      const free = r.seats.filter((s) => !s.name).length;
      els.turn.textContent = `Waiting for ${free} more player${free === 1 ? "" : "s"}.`;
    } else if (r.status === "finished") {
      els.turn.textContent = "Game over.";
    } else if (me !== null && r.to_act?.includes(me)) {
      if ((r.answered ?? []).includes(me)) els.turn.textContent = "You have answered; waiting for the others (you may still change it).";
      else els.turn.textContent = room.legal.length ? "Your move." : "Waiting for the others.";
    } else {
      const who = (r.to_act ?? []).map((s) => seatNames[s]);
      els.turn.textContent = who.length ? `To move: ${who.join(", ")}.` : "";
    }
    els.turn.dataset.mine = String(me !== null && room.legal.length > 0);

    // Join or watch (seats are free only while waiting)
    els.joinBox.replaceChildren();
    if (me === null && r.status === "waiting") {
      const free = r.seats.filter((s) => !s.name);
      if (free.length) {
        els.joinBox.append(h("span", {}, "You are watching. "),
          ...free.map((s) => h("button", { type: "button", class: "primary", "data-join": s.seat, onclick: () => join(s.seat) }, `Take seat ${s.seat + 1}`)));
        if (wantsJoin && detail?.kind === "snapshot" && free.length) els.joinBox.querySelector("button").focus();
      }
    } else if (me === null) {
      els.joinBox.append(h("span", { class: "muted", id: "watching" }, "You are watching."));
    }

    // Controls
    const controls = [h("button", { type: "button", id: "copy-link", onclick: copyLink }, "Copy link")];
    if (me !== null && r.status === "waiting" && r.seats.every((s) => s.name)) {
      controls.push(h("button", { type: "button", onclick: () => client.request("start", { room: roomId }).catch(showError) }, "Start"));
    }
    if (me !== null && r.status !== "finished") controls.push(...endingControls(r, me));
    if (r.status === "finished") controls.push(h("a", { class: "button", href: `#/replay/${roomId}`, id: "replay-link" }, "Replay"));
    controls.push(h("a", { class: "button", href: "#/", onclick: () => leave() }, "Lobby"));
    els.controls.replaceChildren(...controls);

    // Board
    if (boardGame !== r.game) {
      if (board?.destroy) board.destroy(els.board);
      board = boardFor(r.game);
      boardGame = r.game;
    }
    const ctx = {
      game: r.game, rules: r.rules, players: r.players, seat: me, room: r, view: view.game,
      outcome: view.outcome ?? null, legal: room.legal, lastMove: room.lastMove,
      events: room.events, names: seatNames, mode: me === null ? "watch" : "play", act,
    };
    try {
      board.render(els.board, ctx);
    } catch (err) {
      els.board.replaceChildren(h("p", { class: "error" }, `The board could not be drawn: ${err.message}`));
    }

    // Moves
    const legal = room.legal;
    els.movePanel.hidden = els.moveForm.hidden = me === null || r.status !== "playing";
    els.legalCount.textContent = `Legal moves (${legal.length})`;
    els.datalist.replaceChildren(...legal.slice(0, MAX_LEGAL_SHOWN).map((a) => h("option", { value: a })));
    els.legal.replaceChildren(...legal.slice(0, MAX_LEGAL_SHOWN).map((a) => h("li", {},
      h("button", { type: "button", class: "link", "data-legal": a, onclick: () => { els.input.value = a; els.input.focus(); } }, a))));
    if (legal.length > MAX_LEGAL_SHOWN) els.legal.append(h("li", { class: "muted" }, `… ${legal.length - MAX_LEGAL_SHOWN} more`));

    // Events
    if (detail?.kind === "snapshot") els.log.replaceChildren();
    for (const event of detail?.events ?? []) {
      const text = describeEvent(event, seatNames);
      if (text) els.log.prepend(h("li", { "data-type": event.type }, text));
    }
    while (els.log.children.length > 200) els.log.lastChild.remove();

    // Result
    if (r.status === "finished" && view.outcome) {
      els.result.hidden = false;
      els.result.replaceChildren(h("h2", {}, "Game over"), h("p", { id: "result-text" }, outcomeText(view.outcome, seatNames, me)),
        h("p", {}, h("a", { class: "button", href: `#/replay/${roomId}` }, "Watch the replay"), " ", h("a", { class: "button", href: "#/" }, "Back to the lobby")));
    } else {
      els.result.hidden = true;
    }
    updateDeadline();
  }

  // Resign, abort, draw offers (docs/protocol.md "ending a game early"). Resign and
  // abort ask once more in place (no modal dialog: keyboard and screen readers stay put).
  let confirming = null;
  function endingControls(r, me) {
    const send = (type) => () => {
      confirming = null;
      client.request(type, { room: roomId }).catch(showError);
      render({ kind: "controls" });
    };
    const ask = (type) => () => {
      confirming = type;
      render({ kind: "controls" });
      els.controls.querySelector(`[data-confirm="${type}"]`)?.focus();
    };
    if (confirming) {
      const what = confirming === "resign" ? "Resign this game?" : "Abort this game (no result)?";
      return [h("span", { class: "confirm" }, what),
        h("button", { type: "button", class: "primary", "data-confirm": confirming, onclick: send(confirming) }, `Yes, ${confirming}`),
        h("button", { type: "button", onclick: () => { confirming = null; render({ kind: "controls" }); } }, "No")];
    }
    const out = [];
    if (r.status === "waiting") {
      out.push(h("button", { type: "button", id: "leave-seat", onclick: async () => {
        await client.leave(roomId).catch(() => {});
        forgetSeat(roomId);
        location.hash = "#/";
      } }, "Leave seat"));
      out.push(h("button", { type: "button", id: "abort", onclick: ask("abort") }, "Abort"));
      return out;
    }
    out.push(h("button", { type: "button", id: "resign", onclick: ask("resign") }, "Resign"));
    if (r.players === 2) {
      const offer = r.draw_offer ?? null;
      if (offer === null) out.push(h("button", { type: "button", id: "offer-draw", onclick: send("offer_draw") }, "Offer a draw"));
      else if (offer === me) out.push(h("span", { class: "muted" }, "You offered a draw."), h("button", { type: "button", id: "decline-draw", onclick: send("decline_draw") }, "Withdraw"));
      else out.push(h("span", { id: "draw-offered" }, "Draw offered."), h("button", { type: "button", class: "primary", id: "accept-draw", onclick: send("offer_draw") }, "Accept draw"),
        h("button", { type: "button", id: "decline-draw", onclick: send("decline_draw") }, "Decline"));
    }
    out.push(h("button", { type: "button", id: "abort", onclick: ask("abort") }, "Abort"));
    return out;
  }

  function updateDeadline() {
    const room = client.rooms.get(roomId);
    const deadline = room?.view?.room?.deadline;
    if (!els.deadline) return;
    if (deadline == null || room.view.room.status !== "playing") {
      els.deadline.textContent = "";
      els.deadline.hidden = true;
      return;
    }
    const left = deadline - client.serverNow();
    els.deadline.hidden = false;
    els.deadline.textContent = `Time left for this move: ${clock(left)}`;
    els.deadline.classList.toggle("urgent", left < 10);
  }

  async function copyLink() {
    const link = `${location.origin}/#/room/${roomId}`;
    try {
      await navigator.clipboard.writeText(link);
      showError({ message: `Link copied: ${link}` });
    } catch {
      showError({ message: `Share this link: ${link}` });
    }
  }

  function leave() {
    // Leaving the page is not leaving the seat: the token stays, the link resumes it.
    const room = client.rooms.get(roomId);
    if (room && room.seat === null) client.leave(roomId).catch(() => {});
  }

  tick = setInterval(updateDeadline, 250);
  enter();

  return {
    close() {
      closed = true;
      clearInterval(tick);
      client.removeEventListener("room", onRoom);
      client.removeEventListener("roomerror", onRoomError);
      if (board?.destroy && els.board) board.destroy(els.board);
      const room = client.rooms.get(roomId);
      // A spectator stops watching when it leaves the page; a seat keeps its
      // membership on this connection (patches keep the view current) but the
      // server-side seat is never released by navigating away.
      if (room && room.seat === null) client.leave(roomId).catch(() => {});
    },
  };
}
