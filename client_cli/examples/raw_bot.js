#!/usr/bin/env node
// A complete Giants Table bot in plain Node.js with no packages at all: it speaks the
// WebSocket protocol (RFC 6455) over a TCP socket and encodes msgpack itself, to show
// that nothing Python-specific is needed to play. It plays a random legal move.
//
//   node raw_bot.js ws://127.0.0.1:8765 --room ROOM [--seat N]
//   node raw_bot.js ws://127.0.0.1:8765 --create giantslayer [--bots 1=random]
//   node raw_bot.js ws://127.0.0.1:8765 --create giants --players 3 --bots 1=random,2=random
//
// Protocol in one breath: every frame is one msgpack map with a "type". Send "hello"
// first; every request has an "id" and gets one "ok" or "error" back. After "join"
// the server pushes a "snapshot" (the view, its key table "keys", and "legal", the
// seat's legal moves: empty when it need not act) and then "patch"es, which carry
// "legal" only when it changed (or "legal_edit": the changes to the last non-empty
// list, protocol 3). Apply each patch to the snapshot's view, and reply to
// a non-empty legal list with "act" unless view.room.answered holds our seat (a
// simultaneous step we already answered).
'use strict';
const net = require('net');
const crypto = require('crypto');

// ---------------------------------------------------------------- msgpack (subset)
function encode(value) {
  const parts = [];
  const push = (bytes) => parts.push(Buffer.from(bytes));
  const walk = (v) => {
    if (v === null || v === undefined) push([0xc0]);
    else if (v === false) push([0xc2]);
    else if (v === true) push([0xc3]);
    else if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 2 ** 32) {
      if (v < 128) push([v]);
      else if (v < 256) push([0xcc, v]);
      else if (v < 65536) push([0xcd, v >> 8, v & 255]);
      else { const b = Buffer.alloc(5); b[0] = 0xce; b.writeUInt32BE(v, 1); parts.push(b); }
    } else if (typeof v === 'number' && Number.isInteger(v) && v < 0 && v >= -(2 ** 31)) {
      if (v >= -32) push([v & 255]);
      else { const b = Buffer.alloc(5); b[0] = 0xd2; b.writeInt32BE(v, 1); parts.push(b); }
    } else if (typeof v === 'number') {
      const b = Buffer.alloc(9); b[0] = 0xcb; b.writeDoubleBE(v, 1); parts.push(b);
    } else if (typeof v === 'string') {
      const s = Buffer.from(v, 'utf8');
      if (s.length < 32) push([0xa0 | s.length]);
      else if (s.length < 256) push([0xd9, s.length]);
      else if (s.length < 65536) push([0xda, s.length >> 8, s.length & 255]);
      else { const b = Buffer.alloc(5); b[0] = 0xdb; b.writeUInt32BE(s.length, 1); parts.push(b); }
      parts.push(s);
    } else if (Array.isArray(v)) {
      if (v.length < 16) push([0x90 | v.length]);
      else { const b = Buffer.alloc(5); b[0] = 0xdd; b.writeUInt32BE(v.length, 1); parts.push(b); }
      v.forEach(walk);
    } else if (typeof v === 'object') {
      const keys = Object.keys(v).filter((k) => v[k] !== undefined);
      if (keys.length < 16) push([0x80 | keys.length]);
      else { const b = Buffer.alloc(5); b[0] = 0xdf; b.writeUInt32BE(keys.length, 1); parts.push(b); }
      for (const k of keys) { walk(k); walk(v[k]); }
    } else throw new Error('cannot encode ' + typeof v);
  };
  walk(value);
  return Buffer.concat(parts);
}

function decode(buf) {
  let pos = 0;
  const u8 = () => buf[pos++];
  const take = (n) => { const s = buf.subarray(pos, pos + n); pos += n; return s; };
  const str = (n) => take(n).toString('utf8');
  const arr = (n) => { const a = []; for (let i = 0; i < n; i++) a.push(read()); return a; };
  const map = (n) => { const m = {}; for (let i = 0; i < n; i++) { const k = read(); m[k] = read(); } return m; };
  const read = () => {
    const t = u8();
    if (t < 0x80) return t;
    if (t >= 0xe0) return t - 256;
    if ((t & 0xf0) === 0x80) return map(t & 0x0f);
    if ((t & 0xf0) === 0x90) return arr(t & 0x0f);
    if ((t & 0xe0) === 0xa0) return str(t & 0x1f);
    let v;
    switch (t) {
      case 0xc0: return null;
      case 0xc2: return false;
      case 0xc3: return true;
      case 0xc4: return take(u8());
      case 0xc5: v = buf.readUInt16BE(pos); pos += 2; return take(v);
      case 0xc6: v = buf.readUInt32BE(pos); pos += 4; return take(v);
      case 0xca: v = buf.readFloatBE(pos); pos += 4; return v;
      case 0xcb: v = buf.readDoubleBE(pos); pos += 8; return v;
      case 0xcc: return u8();
      case 0xcd: v = buf.readUInt16BE(pos); pos += 2; return v;
      case 0xce: v = buf.readUInt32BE(pos); pos += 4; return v;
      case 0xcf: v = Number(buf.readBigUInt64BE(pos)); pos += 8; return v;
      case 0xd0: v = buf.readInt8(pos); pos += 1; return v;
      case 0xd1: v = buf.readInt16BE(pos); pos += 2; return v;
      case 0xd2: v = buf.readInt32BE(pos); pos += 4; return v;
      case 0xd3: v = Number(buf.readBigInt64BE(pos)); pos += 8; return v;
      case 0xd9: return str(u8());
      case 0xda: v = buf.readUInt16BE(pos); pos += 2; return str(v);
      case 0xdb: v = buf.readUInt32BE(pos); pos += 4; return str(v);
      case 0xdc: v = buf.readUInt16BE(pos); pos += 2; return arr(v);
      case 0xdd: v = buf.readUInt32BE(pos); pos += 4; return arr(v);
      case 0xde: v = buf.readUInt16BE(pos); pos += 2; return map(v);
      case 0xdf: v = buf.readUInt32BE(pos); pos += 4; return map(v);
      default: throw new Error('unsupported msgpack byte 0x' + t.toString(16));
    }
  };
  return read();
}

// ---------------------------------------------------------------- WebSocket (client side)
function connect(url, onMessage, onClose) {
  const u = new URL(url);
  const sock = net.connect(Number(u.port || 80), u.hostname);
  const key = crypto.randomBytes(16).toString('base64');
  let buffer = Buffer.alloc(0);
  let upgraded = false;
  let fragments = [];
  const sendFrame = (opcode, payload) => {
    const mask = crypto.randomBytes(4);
    const n = payload.length;
    const head = n < 126 ? Buffer.from([0x80 | opcode, 0x80 | n])
      : n < 65536 ? Buffer.from([0x80 | opcode, 0x80 | 126, n >> 8, n & 255])
      : (() => { const h = Buffer.alloc(10); h[0] = 0x80 | opcode; h[1] = 0x80 | 127; h.writeBigUInt64BE(BigInt(n), 2); return h; })();
    const body = Buffer.alloc(n);
    for (let i = 0; i < n; i++) body[i] = payload[i] ^ mask[i & 3];  // clients must mask
    sock.write(Buffer.concat([head, mask, body]));
  };
  sock.on('connect', () => {
    sock.write(`GET ${u.pathname || '/'} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\n` +
      `Connection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
  });
  sock.on('data', (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    if (!upgraded) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffer.subarray(0, end).toString();
      if (!/^HTTP\/1\.1 101/.test(head)) throw new Error('upgrade refused: ' + head.split('\r\n')[0]);
      buffer = buffer.subarray(end + 4);
      upgraded = true;
      ws.onopen();
    }
    for (;;) {  // parse every complete frame in the buffer
      if (buffer.length < 2) return;
      const fin = buffer[0] & 0x80, opcode = buffer[0] & 0x0f;
      let n = buffer[1] & 0x7f, off = 2;
      if (n === 126) { if (buffer.length < 4) return; n = buffer.readUInt16BE(2); off = 4; }
      else if (n === 127) { if (buffer.length < 10) return; n = Number(buffer.readBigUInt64BE(2)); off = 10; }
      if (buffer.length < off + n) return;
      const payload = buffer.subarray(off, off + n);
      buffer = buffer.subarray(off + n);
      if (opcode === 9) sendFrame(10, payload);            // ping -> pong
      else if (opcode === 8) { sock.end(); return; }        // close
      else if (opcode === 2 || opcode === 0) {
        fragments.push(payload);
        if (fin) { const whole = Buffer.concat(fragments); fragments = []; onMessage(decode(whole)); }
      }
    }
  });
  sock.on('close', onClose);
  sock.on('error', (e) => { console.error('socket error:', e.message); process.exitCode = 1; });
  const ws = { send: (obj) => sendFrame(2, encode(obj)), close: () => { sendFrame(8, Buffer.from([0x03, 0xe8])); sock.end(); }, onopen: () => {} };
  return ws;
}

// ---------------------------------------------------------------- patches (protocol section 6)
// Protocols 2 and 3: each op is [code, ...path, arg] (0 set, 1 del, 2 trunc, 3 push; del has no
// arg), and a negative path element k stands for keys[-1 - k], the snapshot's key table.
function applyPatch(view, ops, keys) {
  for (const [code, ...rest] of ops) {
    const arg = code === 1 ? undefined : rest.pop();
    const path = rest.map((k) => (Number.isInteger(k) && k < 0 ? keys[-1 - k] : k));
    if (code === 0 && path.length === 0) { view = arg; continue; }
    let node = view;
    const walk = code === 2 || code === 3 ? path : path.slice(0, -1);
    for (const key of walk) node = node[key];
    const last = path[path.length - 1];
    if (code === 0) node[last] = arg;
    else if (code === 1) delete node[last];
    else if (code === 2) node.length = arg;
    else node.push(arg);
  }
  return view;
}

// Protocol 3's legal_edit: splices [index, count, ...actions] applied in order to the
// last non-empty legal list we received (remove count entries at index, insert there).
function applyLegalEdit(base, splices) {
  const out = base.slice();
  for (const [index, count, ...actions] of splices) out.splice(index, count, ...actions);
  return out;
}

// ---------------------------------------------------------------- the bot
function main() {
  const args = process.argv.slice(2);
  const url = args[0];
  const opt = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
  if (!url) { console.error('usage: raw_bot.js URL (--room ROOM [--seat N] | --create GAME [--players N] [--bots SEAT=NAME,...])'); process.exit(2); }
  let nextId = 1;
  const pending = new Map();  // request id -> callback(reply)
  let room = opt('--room');
  let moves = 0;
  let view = null, version = null, seat = null;  // our copy of the room: snapshot + patches
  let keys = [], legal = [], base = [];  // the snapshot's key table; our legal moves (patches send
                                        // changes only); the last non-empty list (legal_edit's base)
  const request = (msg, cb) => { const id = nextId++; pending.set(id, cb || (() => {})); ws.send({ ...msg, id }); };
  const fail = (what, reply) => { console.error(`${what} failed: [${reply.code}] ${reply.message}`); process.exit(1); };

  // Act on a fresh view only, and once per step: in a simultaneous step (a GIANTS
  // sealed bid) "legal" stays non-empty after we answered (an answer may be replaced
  // until every seat is in); view.room.answered lists the seats already in.
  const maybeAct = (legal) => {
    if (!legal || legal.length === 0 || view.room.answered.includes(seat)) return;
    const action = legal[Math.floor(Math.random() * legal.length)];
    request({ type: 'act', room, action, version }, (reply) => {
      if (reply.type === 'ok') moves++;
      // Too fast for the server's rate limit: wait, then ask for a fresh snapshot.
      else if (reply.code === 'rate_limited') {
        setTimeout(() => { view = null; request({ type: 'resync', room }); }, 1000);
      }
      // Someone moved first: the patch that follows brings the new position.
      else if (reply.code !== 'not_your_turn' && reply.code !== 'stale_version') fail('act ' + action, reply);
    });
  };
  const finish = (outcome) => {
    console.log(JSON.stringify({ room, moves, outcome }));
    ws.close();
  };

  const ws = connect(url, (msg) => {
    if (msg.type === 'ok' || msg.type === 'error') {
      const cb = pending.get(msg.id); pending.delete(msg.id);
      if (cb) cb(msg);
    } else if (msg.type === 'snapshot') {
      view = msg.view; version = msg.version; seat = msg.seat; keys = msg.keys; legal = base = msg.legal;
      if (view.outcome) return finish(view.outcome);
      maybeAct(legal);
    } else if (msg.type === 'patch') {
      if (view === null) return;  // waiting for the snapshot a resync asked for
      if (msg.from !== version) { view = null; return request({ type: 'resync', room }); }
      view = applyPatch(view, msg.ops, keys); version = msg.from + 1;
      if (msg.legal !== undefined) legal = msg.legal;  // absent: unchanged
      else if (msg.legal_edit !== undefined) legal = applyLegalEdit(base, msg.legal_edit);
      if (legal.length) base = legal;
      if (view.outcome) return finish(view.outcome);
      maybeAct(legal);
    } else if (msg.type === 'closing') {
      console.error('server closing:', msg.reason);
    }
  }, () => { if (process.exitCode === undefined) process.exitCode = 0; });

  ws.onopen = () => {
    request({ type: 'hello', protocol: 3, name: 'raw-node-bot', client: 'raw_bot.js' }, (reply) => {
      if (reply.type !== 'ok') return fail('hello', reply);
      const join = () => {
        const seat = opt('--seat');
        request({ type: 'join', room, ...(seat !== undefined ? { seat: Number(seat) } : {}) }, (r) => {
          if (r.type !== 'ok') fail('join', r);
        });
      };
      const game = opt('--create');
      if (game) {
        const bots = {};
        for (const spec of (opt('--bots') || '').split(',').filter(Boolean)) {
          const [seat, name] = spec.split('='); bots[seat] = name;
        }
        const players = opt('--players');
        request({ type: 'create_room', game, bots, ...(players ? { players: Number(players) } : {}) }, (r) => {
          if (r.type !== 'ok') return fail('create_room', r);
          room = r.data.room; console.error('created room', room); join();
        });
      } else join();
    });
  };
}

main();
