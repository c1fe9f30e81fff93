// The lobby: the room list (filters, join / watch / replay, a link per room) and the
// form that creates a room from the games the server described in hello.

import { age, h } from "./dom.js";
import { ServerError } from "./protocol.js";
import { setSeat } from "./storage.js";

const REFRESH_MS = 4000;

export function gameTitle(games, name) {
  return games.find((g) => g.name === name)?.title ?? name;
}

function seatText(seat) {
  if (seat.name) return seat.bot ? `${seat.name} (bot)` : seat.name;
  return "free";
}

export function showLobby(app, client) {
  let closed = false;
  let timer = null;
  const filters = { game: "", status: "open", free: false };

  const listStatus = h("p", { class: "muted", role: "status", "aria-live": "polite" });
  const tbody = h("tbody");
  const gameFilter = h("select", { id: "filter-game", onchange: (e) => { filters.game = e.target.value; refresh(); } },
    h("option", { value: "" }, "all games"));
  const statusFilter = h("select", { id: "filter-status", onchange: (e) => { filters.status = e.target.value; refresh(); } },
    h("option", { value: "open" }, "waiting or playing"),
    h("option", { value: "waiting" }, "waiting for players"),
    h("option", { value: "playing" }, "playing"),
    h("option", { value: "finished" }, "finished (replays)"),
    h("option", { value: "all" }, "all"));
  const freeFilter = h("input", { type: "checkbox", id: "filter-free", onchange: (e) => { filters.free = e.target.checked; render(); } });
  let rooms = [];

  const listSection = h("section", { class: "panel", "aria-labelledby": "rooms-title" },
    h("h1", { id: "rooms-title" }, "Rooms"),
    h("div", { class: "filters" },
      h("label", {}, "Game ", gameFilter),
      h("label", {}, "Status ", statusFilter),
      h("label", {}, freeFilter, " with a free seat"),
      h("button", { type: "button", onclick: () => refresh() }, "Refresh")),
    listStatus,
    h("div", { class: "table-wrap" },
      h("table", { class: "rooms", id: "rooms" },
        h("thead", {}, h("tr", {},
          h("th", { scope: "col" }, "Room"), h("th", { scope: "col" }, "Game"),
          h("th", { scope: "col" }, "Players"), h("th", { scope: "col" }, "Status"),
          h("th", { scope: "col" }, "Age"), h("th", { scope: "col" }, ""))),
        tbody)));

  const createSection = h("section", { class: "panel", "aria-labelledby": "create-title" },
    h("h2", { id: "create-title" }, "New room"));
  app.append(listSection, createSection);

  function render() {
    const now = client.serverNow();
    const shown = rooms.filter((r) => {
      if (filters.status === "waiting" && r.status !== "waiting") return false;
      if (filters.status === "playing" && r.status !== "playing") return false;
      if (filters.status === "finished" && r.status !== "finished") return false;
      if (filters.free && !r.seats.some((s) => !s.name)) return false;
      return true;
    });
    shown.sort((a, b) => b.created - a.created);
    tbody.replaceChildren(...shown.map((r) => roomRow(r, now)));
    listStatus.textContent = shown.length ? `${shown.length} room${shown.length > 1 ? "s" : ""}` : "No rooms match. Create one below.";
  }

  function roomRow(r, now) {
    const free = r.seats.filter((s) => !s.name).length;
    const actions = [];
    if (r.status === "finished") {
      actions.push(h("a", { class: "button", href: `#/replay/${r.room}` }, "Replay"));
    } else {
      if (r.status === "waiting" && free) actions.push(h("a", { class: "button primary", href: `#/room/${r.room}?join` }, "Join"));
      actions.push(h("a", { class: "button", href: `#/room/${r.room}` }, "Watch"));
    }
    return h("tr", { "data-room": r.room, "data-status": r.status },
      h("td", {}, h("a", { href: `#/room/${r.room}`, title: "link to this room" }, r.room), r.password ? h("span", { class: "lock", title: "password" }, " 🔒") : null),
      h("td", {}, `${gameTitle(client.games, r.game)}`, h("span", { class: "muted" }, ` · ${r.rules}`)),
      h("td", {}, h("ul", { class: "seats" }, r.seats.map((s) => h("li", { class: s.name ? "" : "free" }, seatText(s))))),
      h("td", {}, r.status, r.spectators ? h("span", { class: "muted" }, ` · ${r.spectators} watching`) : null),
      h("td", {}, age(r.created, now)),
      h("td", { class: "actions" }, actions));
  }

  // The listing comes in pages (`next` cursor); a refresh re-reads as many pages as
  // are shown, so "More rooms" survives the periodic refresh.
  let pages = 1;
  let more = false;
  const moreButton = h("button", { type: "button", id: "more-rooms", hidden: true, onclick: () => { pages += 1; refresh(); } }, "More rooms");
  listSection.append(moreButton);

  async function refresh() {
    clearTimeout(timer);
    try {
      const fields = { limit: 50 };
      if (filters.game) fields.game = filters.game;
      if (filters.status === "finished" || filters.status === "all") fields.include_finished = true;
      const found = [];
      let next = null;
      for (let i = 0; i < pages; i++) {
        const data = await client.request("list_rooms", next ? { ...fields, cursor: next } : fields);
        found.push(...(data.rooms ?? []));
        next = data.next ?? null;
        if (!next) break;
      }
      if (closed) return;
      rooms = found;
      more = Boolean(next);
      moreButton.hidden = !more;
      render();
    } catch (err) {
      if (closed) return;
      listStatus.textContent = err instanceof ServerError ? `Could not list rooms: ${err.message}` : "Could not list rooms.";
    }
    if (!closed) timer = setTimeout(refresh, REFRESH_MS);
  }

  client.ready.then(() => {
    if (closed) return;
    const names = [...new Set(client.games.map((g) => g.name))];
    gameFilter.append(...names.map((n) => h("option", { value: n }, gameTitle(client.games, n))));
    createSection.append(createForm(client));
    refresh();
  });

  return {
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}

function optionInput(spec) {
  const id = `opt-${spec.name}`;
  let input;
  if (spec.choices) {
    input = h("select", { id, name: spec.name }, spec.choices.map((c) => h("option", { value: String(c) }, String(c))));
    input.value = String(spec.default);
  } else if (spec.type === "bool") {
    input = h("input", { type: "checkbox", id, name: spec.name, checked: spec.default });
  } else if (spec.type === "int" || spec.type === "float") {
    input = h("input", { type: "number", id, name: spec.name, value: spec.default ?? "", min: spec.min, max: spec.max, step: spec.type === "int" ? 1 : "any" });
  } else {
    input = h("input", { type: "text", id, name: spec.name, value: spec.default ?? "", maxlength: 256 });
  }
  input.dataset.kind = spec.choices ? `choice-${typeof spec.default}` : spec.type;
  return h("div", { class: "field" }, h("label", { for: id }, spec.name), input, spec.help ? h("small", { class: "muted" }, spec.help) : null);
}

function readOption(input) {
  const kind = input.dataset.kind;
  if (kind === "bool") return input.checked;
  if (kind === "int" || kind === "choice-number") return input.value === "" ? undefined : Number(input.value);
  if (kind === "float") return input.value === "" ? undefined : Number(input.value);
  return input.value;
}

function createForm(client) {
  const games = client.games;
  const names = [...new Set(games.map((g) => g.name))];
  const error = h("p", { class: "error", role: "alert", id: "create-error" });
  const gameSel = h("select", { id: "create-game", name: "game" }, names.map((n) => h("option", { value: n }, gameTitle(games, n))));
  const rulesSel = h("select", { id: "create-rules", name: "rules" });
  const players = h("input", { type: "number", id: "create-players", name: "players", min: 1, step: 1 });
  const optionsBox = h("div", { class: "options" });
  const seatsBox = h("div", { class: "seat-bots" });
  const deadline = h("input", { type: "number", id: "create-deadline", name: "deadline", min: 1, max: 86400, step: 1, placeholder: "none" });
  const priv = h("input", { type: "checkbox", id: "create-private", name: "private" });
  const password = h("input", { type: "password", id: "create-password", name: "password", maxlength: 128, autocomplete: "new-password" });
  const info = h("p", { class: "muted summary" });

  const selected = () => games.find((g) => g.name === gameSel.value && g.rules === rulesSel.value) ?? games.find((g) => g.name === gameSel.value);

  function botsFor(game) {
    const bots = client.bots.length ? client.bots : [{ name: "random", games: null }];
    return bots.filter((b) => !b.games || b.games.includes(game)).map((b) => b.name);
  }

  function fillSeats() {
    const g = selected();
    const n = Number(players.value) || g.players[0];
    const bots = botsFor(g.name);
    const prev = [...seatsBox.querySelectorAll("select")].map((s) => s.value);
    seatsBox.replaceChildren(h("span", { class: "label" }, "Seats"), ...Array.from({ length: n }, (_, i) => {
      const sel = h("select", { id: `create-seat-${i}`, "aria-label": `seat ${i + 1}` },
        h("option", { value: "" }, i === 0 ? "me" : "a person"),
        bots.map((b) => h("option", { value: b }, `bot: ${b}`)));
      if (prev[i] !== undefined) sel.value = prev[i];
      else if (i > 0 && bots.includes("random")) sel.value = "random";
      return h("label", { class: "seat" }, `${i + 1} `, sel);
    }));
  }

  function fillRules() {
    const entries = games.filter((g) => g.name === gameSel.value);
    rulesSel.replaceChildren(...entries.map((g) => h("option", { value: g.rules }, g.rules)));
    fillGame();
  }

  function fillGame() {
    const g = selected();
    players.min = g.players[0];
    players.max = g.players[1];
    players.value = g.players[0];
    players.disabled = g.players[0] === g.players[1];
    optionsBox.replaceChildren(...g.options.map(optionInput));
    info.textContent = g.summary ?? "";
    fillSeats();
  }

  gameSel.addEventListener("change", fillRules);
  rulesSel.addEventListener("change", fillGame);
  players.addEventListener("change", fillSeats);

  const submit = h("button", { type: "submit", class: "primary", id: "create-submit" }, "Create room");
  const form = h("form", { id: "create-form", class: "create" },
    h("div", { class: "field" }, h("label", { for: "create-game" }, "Game"), gameSel),
    h("div", { class: "field" }, h("label", { for: "create-rules" }, "Rule set"), rulesSel),
    info,
    h("div", { class: "field" }, h("label", { for: "create-players" }, "Players"), players),
    optionsBox,
    seatsBox,
    h("div", { class: "field" }, h("label", { for: "create-deadline" }, "Seconds per move"), deadline),
    h("div", { class: "field inline" }, priv, h("label", { for: "create-private" }, "Private (not listed; share the link)")),
    h("div", { class: "field" }, h("label", { for: "create-password" }, "Password (optional)"), password),
    error,
    submit);

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    error.textContent = "";
    const g = selected();
    const fields = { game: g.name, rules: g.rules, players: Number(players.value) || g.players[0] };
    const options = {};
    for (const input of optionsBox.querySelectorAll("input, select")) {
      const value = readOption(input);
      if (value !== undefined && !Number.isNaN(value)) options[input.name] = value;
    }
    if (Object.keys(options).length) fields.options = options;
    const bots = {};
    const humans = [];
    seatsBox.querySelectorAll("select").forEach((sel, i) => {
      if (sel.value) bots[String(i)] = sel.value;
      else humans.push(i);
    });
    if (Object.keys(bots).length) fields.bots = bots;
    if (deadline.value) fields.deadline = Number(deadline.value);
    if (priv.checked) fields.private = true;
    if (password.value) fields.password = password.value;
    submit.disabled = true;
    try {
      const { room } = await client.request("create_room", fields);
      if (humans.length) {
        const data = await client.join(room, { seat: humans[0], password: password.value || undefined });
        setSeat(room, data.seat, data.token);
      }
      location.hash = `#/room/${room}`;
    } catch (err) {
      error.textContent = err.message || String(err);
    } finally {
      submit.disabled = false;
    }
  });

  fillRules();
  return form;
}
