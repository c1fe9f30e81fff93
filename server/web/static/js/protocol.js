// The connection to a Giants Table server over the documented protocol
// (docs/protocol.md): hello, one reply per request id, snapshots + patches per room,
// resync on a gap, reconnection with backoff that resumes seats (token) and watches,
// and `moved` advisories (protocol 4): a new socket naming the room takes every room
// back at the worker that owns it, then the old socket closes.
//
//   const client = new Client(url, {name});
//   client.addEventListener("state", ...)   // detail: "connecting" | "connected" | "reconnecting" | "closed"
//   client.addEventListener("room", ...)    // detail: {room, kind: "snapshot" | "patch", events}
//   await client.ready;                      // first hello answered
//   const data = await client.request("list_rooms", {});   // rejects with ServerError
//   await client.join(roomId, {password}); client.rooms.get(roomId).view ...

import { decode, encode } from "../vendor/msgpack/index.mjs";
import { applyLegalEdit, applyPatch, expandOps, PatchError } from "./patch.js";

export const PROTOCOL_VERSION = 4;
const CLIENT = "giants-web/0.1";

/** A request that failed: `code` is the server's stable error code. */
export class ServerError extends Error {
  constructor(code, message, detail) {
    super(message);
    this.code = code;
    this.detail = detail ?? null;
  }
}

/** What this page knows of one room it is in (as a seat or a spectator). */
export class RoomState {
  constructor(id) {
    this.id = id;
    this.version = -1;
    this.seat = null;
    this.view = null; // {room, game, outcome}
    this.legal = [];
    this.keys = null; // the key table of the last snapshot (protocol 2 and 3)
    this.legalBase = []; // the last non-empty legal list: what a `legal_edit` applies to
    this.events = []; // of the latest patch
    this.log = []; // every event seen since the last snapshot (bounded)
    this.lastMove = null;
    this.token = null; // set for a seat: resume after a reconnect
    this.password = null; // for watch after a reconnect
    this.resyncing = false;
  }
}

export class Client extends EventTarget {
  constructor(url, { name = null, backoff = [200, 5000], room = null } = {}) {
    super();
    this.url = url;
    this.hintRoom = room; // the room this page opens, if any: the socket's routing hint
    this.name = name;
    this.backoff = backoff;
    this.state = "connecting";
    this.rooms = new Map();
    this.games = [];
    this.bots = [];
    this.clockOffset = 0; // server time (ms) - local time (ms)
    this.nextId = 1;
    this.pending = new Map();
    this.ws = null;
    this.attempt = 0;
    this.closedByUser = false;
    this.replacing = null; // the socket a `moved` advisory is replacing, until the new one took the rooms back
    this.moves = 0; // sockets replaced after a `moved` advisory
    this.followed = []; // when the last ones were followed (ms): each follow within a minute waits longer
    this.moveTimer = null;
    // An advisory that came while reconnecting or following an earlier one, and the
    // socket it came on: followed once that is over, if that socket is still in use
    // (the server advises a connection once per owner; dropped, the page stays relayed).
    this.deferred = null;
    this.ready = new Promise((resolve) => (this._resolveReady = resolve));
    this._connect();
  }

  /** Server unix time in seconds, from the clock reported in hello. */
  serverNow() {
    return (Date.now() + this.clockOffset) / 1000;
  }

  _setState(state) {
    if (this.state === state) return;
    this.state = state;
    this.dispatchEvent(new CustomEvent("state", { detail: state }));
  }

  _connect() {
    let ws;
    try {
      const hint = this.rooms.has(this.hintRoom) ? this.hintRoom : (this.rooms.keys().next().value ?? this.hintRoom);
      ws = new WebSocket(withRoomHint(this.url, hint));
    } catch (err) {
      this._scheduleReconnect();
      return;
    }
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    ws.addEventListener("open", () => this._onOpen(ws));
    ws.addEventListener("message", (ev) => this._onMessage(ev, ws));
    ws.addEventListener("close", () => this._onClose(ws));
  }

  async _onOpen(ws) {
    try {
      await this._hello();
      this.attempt = 0;
      // Take back every room this page was in: seats by token, spectators by watch.
      for (const room of this.rooms.values()) {
        room.resyncing = true;
        try {
          if (room.token) {
            await this._send("resume", { room: room.id, token: room.token });
          } else {
            await this._send("watch", this._withPassword({ room: room.id }, room.password));
          }
        } catch (err) {
          room.resyncing = false;
          this.dispatchEvent(new CustomEvent("roomerror", { detail: { room: room.id, error: err } }));
        }
      }
      if (this.ws === ws) {
        this._setState("connected");
        if (this.replacing) {
          // Moved: every room is back on this socket; the old one goes (its seats stay
          // connected throughout: this socket held them first).
          this.replacing.close();
          this.replacing = null;
          this.moves += 1;
        }
      }
      this._resolveReady();
      this._followDeferred();
    } catch (err) {
      if (err instanceof ServerError && err.code === "protocol_mismatch") {
        this.closedByUser = true;
        this.fatal = err;
        this._setState("closed");
      }
      ws.close();
    }
  }

  async _hello() {
    const t0 = Date.now();
    const fields = { protocol: PROTOCOL_VERSION, client: CLIENT };
    if (this.name) fields.name = this.name;
    const data = await this._send("hello", fields);
    const t1 = Date.now();
    if (typeof data.time === "number") this.clockOffset = data.time * 1000 - (t0 + t1) / 2;
    this.games = data.games ?? [];
    this.bots = data.bots ?? [];
    this.session = data.session;
    this.server = data.server;
    this.dispatchEvent(new CustomEvent("hello", { detail: data }));
    return data;
  }

  /** Change the display name (sent with a new hello; used for seats joined later). */
  async setName(name) {
    this.name = name;
    if (this.state === "connected") await this._hello();
  }

  _onClose(ws) {
    if (this.ws !== ws) return;
    this.ws = null;
    if (this.replacing) {
      // The socket meant to replace it failed: drop both and reconnect as after a loss.
      this.replacing.close();
      this.replacing = null;
    }
    for (const { reject } of this.pending.values()) {
      reject(new ServerError("disconnected", "the connection to the server was lost"));
    }
    this.pending.clear();
    if (this.closedByUser) {
      this._setState("closed");
      return;
    }
    this._scheduleReconnect();
  }

  _scheduleReconnect() {
    this._setState("reconnecting");
    const [base, cap] = this.backoff;
    const delay = Math.min(cap, base * 2 ** this.attempt) * (0.5 + Math.random() / 2);
    this.attempt += 1;
    setTimeout(() => {
      if (!this.closedByUser) this._connect();
    }, delay);
  }

  close() {
    this.closedByUser = true;
    if (this.ws) this.ws.close();
    this._setState("closed");
  }

  _onMessage(ev, ws) {
    let msg;
    try {
      msg = decode(new Uint8Array(ev.data));
    } catch (err) {
      return; // not a frame of this protocol: nothing to do with it
    }
    if (msg === null || typeof msg !== "object") return;
    const kind = msg.type;
    if ((kind === "ok" || kind === "error") && this.pending.has(msg.id)) {
      const { resolve, reject } = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (kind === "ok") resolve(msg.data ?? {});
      else reject(new ServerError(msg.code, msg.message, msg.detail));
      return;
    }
    if (ws !== this.ws) return; // a socket being replaced: the new one's snapshots rule
    if (kind === "moved") this._onMoved(msg, ws);
    else if (kind === "snapshot") this._onSnapshot(msg);
    else if (kind === "patch") this._onPatch(msg);
    else if (kind === "closing") this._setState("reconnecting");
  }

  /** The server advises `moved` (protocol 4): the worker owning `msg.room` (and every
   * other room of this page) is another one. Once the requests in flight are answered,
   * open a socket naming the room; it takes the rooms back (`_onOpen`) before the old
   * one closes. Requests made meanwhile wait for it. */
  _onMoved(msg, ws) {
    if (this.closedByUser || typeof msg.room !== "string") return;
    if (this.moveTimer) return; // this socket is being replaced already
    if (this.replacing || this.state !== "connected") {
      this.deferred = { room: msg.room, ws }; // not sent again: follow it once this is over
      return;
    }
    // Followed lately already: wait longer each time (a server whose hand-over keeps
    // failing would otherwise have the page reconnect over and over).
    const now = Date.now();
    this.followed = this.followed.filter((t) => now - t < 60000);
    const wait = this.followed.length ? Math.min(500 * 2 ** (this.followed.length - 1), 30000) : 0;
    this.moveTimer = setTimeout(() => {
      this.moveTimer = null;
      if (this.ws !== ws || this.replacing || this.closedByUser || this.state !== "connected") return;
      this.followed.push(Date.now());
      this.replacing = ws;
      this.ready = new Promise((resolve) => (this._resolveReady = resolve));
      const started = Date.now();
      const go = () => {
        if (this.ws !== ws || this.replacing !== ws) return; // lost meanwhile: the reconnect takes over
        if (this.pending.size && Date.now() - started < 30000) {
          setTimeout(go, 20);
          return;
        }
        if (this.pending.size) {
          // Still busy: stay on this socket (the relay serves it).
          this.replacing = null;
          this._resolveReady();
          this._followDeferred();
          return;
        }
        this.hintRoom = msg.room;
        this._connect(); // this.ws is the new socket from here on
      };
      go();
    }, wait);
  }

  /** Follow the advisory kept by `_onMoved`, if it came on the socket now in use (one
   * that came on a socket since replaced is moot: the server advises the new one itself
   * if it must). */
  _followDeferred() {
    const deferred = this.deferred;
    this.deferred = null;
    if (deferred && deferred.ws === this.ws && !this.closedByUser) this._onMoved({ room: deferred.room }, deferred.ws);
  }

  _onSnapshot(msg) {
    const room = this.rooms.get(msg.room);
    if (!room) return;
    room.version = msg.version;
    room.seat = msg.seat;
    room.view = msg.view;
    room.legal = msg.legal ?? [];
    room.legalBase = room.legal;
    room.keys = Array.isArray(msg.keys) ? msg.keys : null; // protocol 2 and 3: the patches' key table
    room.events = [];
    room.resyncing = false;
    this.dispatchEvent(new CustomEvent("room", { detail: { room: msg.room, kind: "snapshot", events: [] } }));
  }

  _onPatch(msg) {
    const room = this.rooms.get(msg.room);
    if (!room || room.resyncing) return;
    if (msg.from < room.version) return; // old: already reflected in the view
    if (msg.from !== room.version) {
      this.resync(room);
      return;
    }
    try {
      const view = applyPatch(room.view, room.keys ? expandOps(msg.ops, room.keys) : msg.ops);
      // Protocol 3 may send the change from the last non-empty list instead of the list.
      if (msg.legal === undefined && msg.legal_edit !== undefined) msg.legal = applyLegalEdit(room.legalBase, msg.legal_edit);
      room.view = view;
    } catch (err) {
      if (err instanceof PatchError) {
        this.resync(room);
        return;
      }
      throw err;
    }
    // Protocols 2 and 3 leave out `to` (from + 1), a legal list that did not change, and send
    // the action event as `act`.
    room.version = msg.to ?? msg.from + 1;
    if (msg.legal !== undefined) room.legal = msg.legal;
    if (room.legal.length) room.legalBase = room.legal;
    room.events = msg.events ?? [];
    if (Array.isArray(msg.act)) room.events = [{ type: "action", seat: msg.act[0], action: msg.act[1] }, ...room.events];
    for (const event of room.events) {
      if (event.type === "action" && event.action != null) room.lastMove = { seat: event.seat, action: event.action };
      room.log.push(event);
    }
    if (room.log.length > 500) room.log.splice(0, room.log.length - 500);
    this.dispatchEvent(new CustomEvent("room", { detail: { room: msg.room, kind: "patch", events: room.events } }));
  }

  /** Ask for a fresh snapshot of `room`; patches are ignored until it arrives. */
  resync(room) {
    if (room.resyncing) return;
    room.resyncing = true;
    this._send("resync", { room: room.id }).catch(() => {
      room.resyncing = false;
    });
  }

  _withPassword(fields, password) {
    if (password) fields.password = password;
    return fields;
  }

  _send(type, fields) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new ServerError("disconnected", "not connected to the server"));
    }
    const id = this.nextId++;
    const frame = encode({ type, id, ...fields }, { ignoreUndefined: true });
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      ws.send(frame);
    });
  }

  /** One request; resolves with the `ok` data, rejects with a ServerError. */
  async request(type, fields = {}) {
    if ((this.state !== "connected" || this.replacing) && type !== "hello") await this.ready;
    return this._send(type, fields);
  }

  _track(id) {
    let room = this.rooms.get(id);
    if (!room) {
      room = new RoomState(id);
      this.rooms.set(id, room);
    }
    return room;
  }

  /** Take a seat; the token is kept on the RoomState (store it to survive reloads). */
  async join(id, { seat, password } = {}) {
    const room = this._track(id);
    room.resyncing = true; // the snapshot follows the ok
    try {
      const data = await this.request("join", this._withPassword({ room: id, seat }, password));
      room.token = data.token;
      room.password = password ?? null;
      return data;
    } catch (err) {
      room.resyncing = false;
      if (room.version < 0) this.rooms.delete(id);
      throw err;
    }
  }

  async watch(id, { password } = {}) {
    const room = this._track(id);
    room.resyncing = true;
    try {
      const data = await this.request("watch", this._withPassword({ room: id }, password));
      room.password = password ?? null;
      return data;
    } catch (err) {
      room.resyncing = false;
      if (room.version < 0) this.rooms.delete(id);
      throw err;
    }
  }

  async resume(id, token) {
    const room = this._track(id);
    room.resyncing = true;
    try {
      const data = await this.request("resume", { room: id, token });
      room.token = token;
      return data;
    } catch (err) {
      room.resyncing = false;
      if (room.version < 0) this.rooms.delete(id);
      throw err;
    }
  }

  async leave(id) {
    this.rooms.delete(id);
    try {
      await this.request("leave", { room: id });
    } catch (err) {
      if (!(err instanceof ServerError)) throw err;
    }
  }

  /** Play `action` at the version this page last saw (stale_version otherwise). */
  act(id, action) {
    const room = this.rooms.get(id);
    const fields = { room: id, action };
    if (room && room.version >= 0) fields.version = room.version;
    return this.request("act", fields);
  }
}

/** `url` naming `room` (`?room=<id>`) as the room this socket is about to join or
 * watch: a routing hint only (docs/protocol.md): a server of several workers hands the
 * connection to the one that owns the room instead of relaying it. */
export function withRoomHint(url, room) {
  if (!room) return url;
  const u = new URL(url);
  u.searchParams.set("room", room);
  return u.toString();
}

/** The WebSocket address of the server that served this page. */
export function defaultServerUrl(loc = window.location) {
  const scheme = loc.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${loc.host}/`;
}
