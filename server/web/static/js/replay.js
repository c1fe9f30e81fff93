// The replay viewer (#/replay/ID): the server sends the table's view at the start and
// the ops of each move (`replay` with positions: docs/protocol.md); the viewer builds
// every position once (copy-on-write patches share what did not change) and steps or
// scrubs through them with buttons, a slider, the move list or the arrow keys.

import { boardFor } from "../boards/index.js";
import { h } from "./dom.js";
import { gameTitle } from "./lobby.js";
import { applyPatch } from "./patch.js";
import { outcomeText } from "./text.js";

// At most this many listing pages (of up to 200 rooms) are read to find a replay's seat
// names; past that the seats show as "seat N".
const MAX_NAME_PAGES = 10;

export function showReplay(app, client, roomId) {
  let closed = false;
  const status = h("p", { class: "muted", role: "status" }, "Loading the replay…");
  const page = h("div", { class: "replay-page", "data-room": roomId }, status);
  app.append(page);
  let onKey = null;
  let board = null;
  let boardEl = null;

  async function load(password) {
    await client.ready;
    let data;
    try {
      const fields = { room: roomId, positions: true };
      if (password) fields.password = password;
      data = await client.request("replay", fields);
    } catch (err) {
      if (closed) return;
      if (err.code === "bad_password") return askPassword(password !== undefined);
      const text = err.code === "not_finished"
        ? "This game is not over yet: its replay opens when it ends."
        : `No replay: ${err.message}`;
      page.replaceChildren(h("section", { class: "panel" }, h("p", { class: "error", role: "alert" }, text),
        h("p", {}, err.code === "not_finished" ? h("a", { href: `#/room/${roomId}` }, "Watch the game") : null, " ",
          h("a", { href: "#/" }, "Back to the lobby"))));
      return;
    }
    if (closed) return;
    // Seat names are not part of the replay: the lobby lists them for public rooms.
    // The listing comes in pages (`next` cursor); read on until this room is in one.
    try {
      const fields = { game: data.game, include_finished: true, limit: 200 };
      let next = null;
      let refused = 0;
      for (let page = 0; page < MAX_NAME_PAGES; page++) {
        let reply;
        try {
          reply = await client.request("list_rooms", next ? { ...fields, cursor: next } : fields);
        } catch (err) {
          // A page of 200 costs 21 tokens: a long listing can run the bucket dry. The
          // page was not read: wait for tokens and ask for it again (a few times).
          if (err.code !== "rate_limited" || ++refused > 5 || closed) throw err;
          await new Promise((resolve) => setTimeout(resolve, 500));
          page--;
          continue;
        }
        refused = 0;
        const summary = (reply.rooms ?? []).find((r) => r.room === roomId);
        if (summary) {
          data.names = summary.seats.map((s) => s.name ?? null);
          break;
        }
        next = reply.next ?? null;
        if (!next || closed) break;
      }
    } catch {
      // names stay "seat N"
    }
    if (closed) return;
    show(data);
  }

  function askPassword(wrong) {
    const input = h("input", { type: "password", id: "room-password", maxlength: 128, autocomplete: "current-password", required: true });
    const form = h("form", { class: "panel password-form", id: "password-form" },
      h("h1", {}, `Replay of room ${roomId}`),
      h("p", {}, "This room's replay needs its password."),
      wrong ? h("p", { class: "error", role: "alert" }, "Wrong password.") : null,
      h("div", { class: "field" }, h("label", { for: "room-password" }, "Password"), input),
      h("button", { type: "submit", class: "primary" }, "Open"), " ", h("a", { href: "#/" }, "Back to the lobby"));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      page.replaceChildren(status);
      load(input.value);
    });
    page.replaceChildren(form);
    input.focus();
  }

  function show(data) {
    const pos = data.positions;
    const views = [pos.view];
    for (const step of pos.steps) views.push(applyPatch(views[views.length - 1], step.ops));
    const last = views.length - 1;
    const names = (data.names ?? Array.from({ length: data.players }, (_, i) => null)).map((n, i) => n ?? `seat ${i + 1}`);
    let index = last;

    const slider = h("input", { type: "range", id: "replay-slider", min: 0, max: last, value: last, "aria-label": "position" });
    const where = h("span", { id: "replay-where", "aria-live": "polite" });
    const moveList = h("ol", { class: "move-list", id: "replay-moves", start: 1 });
    boardEl = h("div", { class: "board", id: "board" });
    const result = h("p", { class: "replay-result", id: "replay-result" });
    const button = (id, label, text, fn) => h("button", { type: "button", id, "aria-label": label, onclick: fn }, text);
    const controls = h("div", { class: "replay-controls", role: "group", "aria-label": "replay controls" },
      button("replay-first", "first position", "|◀", () => go(0)),
      button("replay-prev", "previous move", "◀", () => go(index - 1)),
      slider,
      button("replay-next", "next move", "▶", () => go(index + 1)),
      button("replay-last", "last position", "▶|", () => go(last)),
      where);
    slider.addEventListener("input", () => go(Number(slider.value)));
    pos.steps.forEach((step, i) => {
      moveList.append(h("li", {}, h("button", { type: "button", class: "link", "data-step": i + 1, onclick: () => go(i + 1) },
        `${names[step.seat] ?? `seat ${step.seat + 1}`}: ${step.action ?? "(hidden)"}`)));
    });

    page.replaceChildren(
      h("header", { class: "panel" },
        h("h1", {}, `Replay: ${gameTitle(client.games, data.game)} `, h("span", { class: "muted" }, `${data.rules} · room ${roomId}`)),
        h("p", {}, names.join(" vs ")),
        controls,
        pos.complete ? null : h("p", { class: "error" }, "The stored log stops replaying here; later moves are missing."),
        h("p", {}, h("a", { class: "button", href: "#/" }, "Back to the lobby"))),
      h("div", { class: "room-body" },
        h("section", { class: "board-area", "aria-label": "board" }, boardEl),
        h("aside", { class: "side" }, h("section", { class: "panel" }, h("h2", {}, "Moves"), result, moveList))));

    board = boardFor(data.game);

    // A read-only handle for debugging and the browser tests: the positions built.
    window.giantsReplay = { views, get index() { return index; } };

    function go(i) {
      index = Math.max(0, Math.min(last, i));
      page.dataset.position = String(index);
      slider.value = String(index);
      where.textContent = `move ${index} of ${last}`;
      for (const [n, li] of [...moveList.children].entries()) {
        li.classList.toggle("current", n + 1 === index);
        li.firstChild.setAttribute("aria-current", n + 1 === index ? "step" : "false");
      }
      const step = index > 0 ? pos.steps[index - 1] : null;
      const finished = index === last && data.outcome;
      result.textContent = finished ? outcomeText(data.outcome, names, null) : "";
      result.hidden = !finished;
      const room = {
        id: roomId, game: data.game, rules: data.rules, players: data.players,
        status: finished ? "finished" : "playing",
        seats: names.map((name, seat) => ({ seat, name, connected: false, bot: null })),
        to_act: (step ? step.to_act : pos.to_act) || [], deadline: null,
      };
      try {
        board.render(boardEl, {
          game: data.game, rules: data.rules, players: data.players, seat: null, room, view: views[index],
          outcome: finished ? data.outcome : null, legal: [],
          lastMove: step && step.action != null ? { seat: step.seat, action: step.action } : null,
          events: [], names, mode: "replay",
          act: () => Promise.reject({ code: "not_seated", message: "this is a replay" }),
        });
      } catch (err) {
        boardEl.replaceChildren(h("p", { class: "error" }, `The board could not be drawn: ${err.message}`));
      }
    }

    onKey = (ev) => {
      if (ev.target instanceof HTMLInputElement && ev.target !== slider) return;
      if (ev.target === slider) return; // the slider handles its own arrows
      if (ev.key === "ArrowLeft") go(index - 1);
      else if (ev.key === "ArrowRight") go(index + 1);
      else if (ev.key === "Home") go(0);
      else if (ev.key === "End") go(last);
      else return;
      ev.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    go(index);
  }

  load();
  return {
    close() {
      closed = true;
      if (onKey) document.removeEventListener("keydown", onKey);
      if (board?.destroy && boardEl) board.destroy(boardEl);
    },
  };
}
