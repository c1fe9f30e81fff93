// The web client's entry point: one connection for the page, hash routes
// (#/ lobby, #/room/ID play or watch, #/replay/ID replay viewer).

import { Client, defaultServerUrl } from "./protocol.js";
import { getName, setName } from "./storage.js";
import { showLobby } from "./lobby.js";
import { showRoom } from "./room.js";
import { showReplay } from "./replay.js";

const STATE_TEXT = {
  connecting: "connecting…",
  connected: "connected",
  reconnecting: "reconnecting…",
  closed: "disconnected",
};

/** The room a `#/room/ID` link opens (named in the socket's URL: a routing hint, docs/protocol.md). */
function linkedRoom() {
  try {
    const match = decodeURIComponent(location.hash.replace(/^#/, "")).match(/^\/room\/([A-Za-z0-9_-]{1,64})/);
    return match ? match[1] : null;
  } catch {
    return null; // a malformed link: the page routes it as before
  }
}

const client = new Client(defaultServerUrl(), { name: getName(), room: linkedRoom() });
window.giantsClient = client; // for debugging from the console (and browser tests)

const conn = document.getElementById("conn");
client.addEventListener("state", (ev) => {
  conn.dataset.state = ev.detail;
  conn.textContent = client.fatal ? `disconnected: ${client.fatal.message}` : STATE_TEXT[ev.detail];
});

const nameInput = document.getElementById("name-input");
nameInput.value = getName() ?? "";
const saveName = () => {
  const name = nameInput.value.trim().slice(0, 64);
  if (name === (getName() ?? "")) return;
  setName(name);
  client.setName(name || null).catch(() => {});
};
document.getElementById("name-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  saveName();
  nameInput.blur();
});
nameInput.addEventListener("change", saveName);

const app = document.getElementById("app");
let current = null; // the page shown: {close()}

function route() {
  if (current) current.close();
  current = null;
  app.replaceChildren();
  const hash = decodeURIComponent(location.hash.replace(/^#/, ""));
  const parts = hash.split("/").filter(Boolean);
  if (parts[0] === "room" && parts[1]) {
    current = showRoom(app, client, parts[1]);
  } else if (parts[0] === "replay" && parts[1]) {
    current = showReplay(app, client, parts[1]);
  } else {
    current = showLobby(app, client);
  }
}

window.addEventListener("hashchange", route);
route();
