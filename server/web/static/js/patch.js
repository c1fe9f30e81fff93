// The patch format of docs/protocol.md §6, applied exactly as protocol/patch.py does:
// ops in order, copy-on-write (the old view is never modified, so a replay viewer can
// keep every position it built), and a PatchError for any op that does not fit; the
// caller then asks for a resync. Keep this module small and alone: a change of the
// patch encoding touches only this file.

export class PatchError extends Error {}

const isMap = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Uint8Array);
const isList = Array.isArray;
const isIndex = (k) => Number.isInteger(k);

function copy(node, fresh) {
  if (fresh.has(node)) return node;
  const c = isList(node) ? node.slice() : Object.assign({}, node);
  fresh.add(c);
  return c;
}

function child(parent, key, path) {
  if (isMap(parent) && typeof key === "string" && Object.prototype.hasOwnProperty.call(parent, key)) {
    return parent[key];
  }
  if (isList(parent) && isIndex(key) && key >= 0 && key < parent.length) return parent[key];
  throw new PatchError(`path ${JSON.stringify(path)} does not exist in the view`);
}

function applyOne(root, op, fresh) {
  if (!isList(op) || op.length < 2 || !isList(op[1])) throw new PatchError(`malformed op ${JSON.stringify(op)}`);
  const kind = op[0];
  const path = op[1];
  if (kind === "set" && path.length === 0) {
    if (op.length !== 3) throw new PatchError("malformed op");
    return op[2];
  }
  if (!["set", "del", "trunc", "push"].includes(kind)) throw new PatchError(`unknown op ${JSON.stringify(kind)}`);
  const onList = kind === "trunc" || kind === "push";
  const walk = onList ? path : path.slice(0, -1);
  const container = (v) => isMap(v) || isList(v);
  if (!container(root)) throw new PatchError(`path ${JSON.stringify(path)} does not exist in the view`);
  root = copy(root, fresh);
  let node = root;
  walk.forEach((key, i) => {
    let next = child(node, key, path.slice(0, i + 1));
    if (container(next)) {
      next = copy(next, fresh);
      node[key] = next;
    } else if (i < walk.length - 1 || onList) {
      throw new PatchError(`path ${JSON.stringify(path)} does not exist in the view`);
    }
    node = next;
  });
  if (onList) {
    if (!isList(node)) throw new PatchError(`${kind} at ${JSON.stringify(path)}: not a list`);
    if (op.length !== 3) throw new PatchError("malformed op");
    if (kind === "push") {
      node.push(op[2]);
    } else {
      const n = op[2];
      if (!isIndex(n) || n < 0 || n > node.length) throw new PatchError(`trunc: bad length ${n}`);
      node.length = n;
    }
    return root;
  }
  const key = path[path.length - 1];
  if (kind === "set") {
    if (op.length !== 3) throw new PatchError("malformed op");
    if (isMap(node) && typeof key === "string") node[key] = op[2];
    else if (isList(node) && isIndex(key) && key >= 0 && key < node.length) node[key] = op[2];
    else throw new PatchError(`set at ${JSON.stringify(path)}: no such slot`);
    return root;
  }
  if (!isMap(node) || typeof key !== "string" || !Object.prototype.hasOwnProperty.call(node, key)) {
    throw new PatchError(`del at ${JSON.stringify(path)}: no such key`);
  }
  delete node[key];
  return root;
}

const KINDS = ["set", "del", "trunc", "push"];

/**
 * Protocol 2's compact ops (docs/protocol.md §6) in the form `applyPatch` takes: each op
 * `[code, ...path, arg]`, a negative path element -1-i standing for `keys[i]` (the key
 * table of the room's snapshot). Throws PatchError for anything malformed.
 */
export function expandOps(ops, keys) {
  if (!isList(ops)) throw new PatchError("ops is not a list");
  return ops.map((op) => {
    if (!isList(op) || !isIndex(op[0]) || op[0] < 0 || op[0] > 3) throw new PatchError(`malformed op ${JSON.stringify(op)}`);
    const code = op[0];
    if (code !== 1 && op.length < 2) throw new PatchError(`malformed op ${JSON.stringify(op)}`);
    const raw = code === 1 ? op.slice(1) : op.slice(1, -1);
    const path = raw.map((k) => {
      if (!isIndex(k) || k >= 0) return k;
      if (-k > keys.length) throw new PatchError(`key reference ${k} outside the key table`);
      return keys[-1 - k];
    });
    return code === 1 ? [KINDS[code], path] : [KINDS[code], path, op[op.length - 1]];
  });
}

/** Apply `ops` in order to `view` and return the new view; `view` is left untouched. */
export function applyPatch(view, ops) {
  if (!isList(ops)) throw new PatchError("ops is not a list");
  const fresh = new Set();
  let root = view;
  for (const op of ops) root = applyOne(root, op, fresh);
  return root;
}

/**
 * Protocol 3's `legal_edit` (docs/protocol.md §6): splices `[index, count, ...actions]`,
 * applied in order, turning `base` (the seat's last non-empty legal list) into the new
 * list. Returns a new array; throws PatchError when a splice does not fit.
 */
export function applyLegalEdit(base, splices) {
  if (!isList(splices)) throw new PatchError("legal_edit is not a list");
  const out = base.slice();
  for (const sp of splices) {
    if (!isList(sp) || sp.length < 2 || !isIndex(sp[0]) || !isIndex(sp[1])
        || sp[0] < 0 || sp[0] > out.length || sp[1] < 0 || sp[1] > out.length - sp[0]
        || !sp.slice(2).every((a) => typeof a === "string")) {
      throw new PatchError(`legal_edit splice ${JSON.stringify(sp)} does not fit a list of ${out.length}`);
    }
    out.splice(sp[0], sp[1], ...sp.slice(2));
  }
  return out;
}
