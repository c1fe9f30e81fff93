"""The page's protocol modules in the browser: patch.js against protocol/patch.py, and
protocol.js resyncing after a gap or a patch that does not fit."""

from __future__ import annotations

import json
import random

from web_helpers import wait_until

from protocol.compact import compact_ops, key_refs, key_table
from protocol.legal import legal_edit
from protocol.patch import PatchError, apply_patch, diff


def random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(7 if depth < 3 else 4)
    if kind == 0:
        return rng.randrange(-5, 50)
    if kind == 1:
        return rng.choice(["a", "b", "", "W", "B", "."])
    if kind == 2:
        return rng.choice([True, False, None])
    if kind == 3:
        return rng.choice([0.5, 1.5, -2.25])
    if kind in (4, 5):
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(6))]
    return {rng.choice("abcdef"): random_value(rng, depth + 1) for _ in range(rng.randrange(5))}


def mutate(rng: random.Random, value: object, depth: int = 0) -> object:
    if isinstance(value, list) and value and rng.random() < 0.8:
        out = [mutate(rng, v, depth + 1) if rng.random() < 0.4 else v for v in value]
        if rng.random() < 0.3:
            out = out[: rng.randrange(len(out) + 1)]
        if rng.random() < 0.3:
            out.append(random_value(rng, depth + 1))
        return out
    if isinstance(value, dict) and value and rng.random() < 0.8:
        out = {k: mutate(rng, v, depth + 1) if rng.random() < 0.4 else v for k, v in value.items()}
        if rng.random() < 0.3:
            out.pop(rng.choice(list(out)), None)
        if rng.random() < 0.3:
            out[rng.choice("ghij")] = random_value(rng, depth + 1)
        return out
    return random_value(rng, depth) if rng.random() < 0.5 else value


APPLY_ALL = """async (cases) => {
  const { applyPatch } = await import("/js/patch.js");
  return cases.map(([old, ops]) => {
    const before = JSON.stringify(old);
    try {
      const out = applyPatch(old, ops);
      return { ok: out, untouched: JSON.stringify(old) === before };
    } catch (err) {
      return { error: err.name + ": " + err.message, patchError: err.constructor.name === "PatchError" };
    }
  });
}"""


async def test_patch_js_applies_what_the_server_diffs(web_server, open_page) -> None:
    """Every diff protocol/patch.py makes turns old into new in the browser too, and the
    old view is left untouched (the replay viewer keeps every position)."""
    page = await open_page(web_server)
    rng = random.Random(20261122)
    cases = []
    for _ in range(400):
        old = {"room": random_value(rng), "game": random_value(rng)}
        new = mutate(rng, old)
        # JSON has no int/float distinction for 1 vs 1.0; keep values JSON-faithful.
        old, new = json.loads(json.dumps(old)), json.loads(json.dumps(new))
        cases.append((old, new, diff(old, new)))
    results = await page.evaluate(APPLY_ALL, [[old, ops] for old, _, ops in cases])
    for (old, new, ops), result in zip(cases, results, strict=True):
        assert "error" not in result, (old, ops, result)
        assert result["ok"] == new, (old, ops)
        assert result["untouched"], (old, ops)


EXPAND_ALL = """async ([keys, cases]) => {
  const { applyPatch, expandOps } = await import("/js/patch.js");
  return cases.map(([old, ops]) => {
    try {
      return { ok: applyPatch(old, expandOps(ops, keys)) };
    } catch (err) {
      return { error: err.name + ": " + err.message, patchError: err.constructor.name === "PatchError" };
    }
  });
}"""


async def test_patch_js_reads_protocol_2_ops(web_server, open_page) -> None:
    """protocol/compact.py's ops (key references, integer codes) read in the browser give
    the server's new view; malformed ones are a PatchError (the page resyncs)."""
    page = await open_page(web_server)
    rng = random.Random(2)
    keys = list(key_table(("a", "b", "c", "g")))
    refs = key_refs(keys)
    cases = []
    for _ in range(300):
        old = {"room": random_value(rng), "game": random_value(rng)}
        new = json.loads(json.dumps(mutate(rng, old)))
        old = json.loads(json.dumps(old))
        cases.append((old, new, compact_ops(diff(old, new), refs, new)))
    bad = [[[4, -1, 1]], [[0, -999, 1]], [[0]], [["set", ["room"], 1]], "nope"]
    results = await page.evaluate(EXPAND_ALL, [keys, [[old, ops] for old, _, ops in cases] + [[{}, ops] for ops in bad]])
    for (old, new, ops), result in zip(cases, results, strict=False):
        assert result.get("ok") == new, (old, ops, result)
    for ops, result in zip(bad, results[len(cases):], strict=True):
        assert result.get("patchError"), (ops, result)


EDIT_ALL = """async (cases) => {
  const { applyLegalEdit } = await import("/js/patch.js");
  return cases.map(([base, splices]) => {
    try {
      return { ok: applyLegalEdit(base, splices) };
    } catch (err) {
      return { error: err.name + ": " + err.message, patchError: err.constructor.name === "PatchError" };
    }
  });
}"""


async def test_patch_js_rebuilds_a_legal_list_from_protocol_3_edits(web_server, open_page) -> None:
    """protocol/legal.py's `legal_edit` splices applied in the browser give the seat's new
    list; splices that do not fit its base are a PatchError (the page resyncs)."""
    page = await open_page(web_server)
    rng = random.Random(3)
    pool = [f"place worker ({i % 13},{i // 13}) logs {i % 3}" for i in range(200)]
    cases = []
    while len(cases) < 200:
        base = [pool[i] for i in sorted(rng.sample(range(200), rng.randrange(1, 60)))]
        new = [pool[i] for i in sorted(rng.sample(range(200), rng.randrange(1, 60)))]
        edit = legal_edit(base, new)
        if edit is not None:
            cases.append((base, new, edit))
    bad = [[[9, 0]], [[0, 9]], [[0]], [["0", 1]], [[0, 0, 5]], "nope"]
    results = await page.evaluate(EDIT_ALL, [[base, edit] for base, _, edit in cases] + [[["a", "b"], e] for e in bad])
    for (base, new, edit), result in zip(cases, results, strict=False):
        assert result.get("ok") == new, (base, edit, result)
    for edit, result in zip(bad, results[len(cases):], strict=True):
        assert result.get("patchError"), (edit, result)


async def test_patch_js_refuses_what_patch_py_refuses(web_server, open_page) -> None:
    view = {"a": [1, 2, {"b": "x"}], "c": {"d": None}}
    bad = [
        [["set", ["zz", "y"], 1]],
        [["set", ["a", 3], 1]],
        [["del", ["a", 0]]],
        [["del", ["c", "nope"]]],
        [["trunc", ["a"], 4]],
        [["trunc", ["c"], 0]],
        [["push", ["c", "d"], 1]],
        [["move", ["a"], 1]],
        [["set"]],
        ["set", ["a"], 1],
    ]
    good = [[["set", [], 5]], [["trunc", ["a"], 1], ["push", ["a"], 9]], [["del", ["c", "d"]]], [["set", ["a", 2, "b"], "y"]]]
    page = await open_page(web_server)
    results = await page.evaluate(APPLY_ALL, [[view, ops] for ops in bad + good])
    for ops, result in zip(bad, results[: len(bad)], strict=True):
        try:
            apply_patch(view, ops)
        except PatchError:
            pass
        else:
            raise AssertionError(f"patch.py accepted {ops}")
        assert result.get("patchError"), (ops, result)
    for ops, result in zip(good, results[len(bad):], strict=True):
        assert result["ok"] == apply_patch(view, ops)


async def test_a_gap_or_a_bad_patch_makes_the_page_resync(web_server, open_page, server_client) -> None:
    py = await server_client(web_server, "bob")
    room = (await py.create_room("giantslayer", options={"rounds": 1}))["room"]
    bob = await py.join(room, seat=1)
    page = await open_page(web_server, path=f"#/room/{room}", name="ann")
    await page.click('[data-join="0"]')
    await page.wait_for_selector('#turn[data-mine="true"]')
    key = json.dumps(room)
    state = f"() => {{ const r = window.giantsClient.rooms.get({key}); return [r.version, r.resyncing, r.view.room.status]; }}"
    version, resyncing, status = await page.evaluate(state)
    assert not resyncing and status == "playing"
    # A patch from the future (a gap): ignored, a resync brings a fresh snapshot.
    await page.evaluate(
        f"() => {{ const r = window.giantsClient.rooms.get({key}); r.view = {{room: {{}}, game: null}};"
        f" window.giantsClient._onPatch({{room: {key}, from: r.version + 3, to: r.version + 4, ops: [], events: []}}); }}"
    )
    await wait_until(page, f"() => {{ const r = window.giantsClient.rooms.get({key}); return !r.resyncing && r.view.game !== null; }}")
    assert (await page.evaluate(state))[:1] == [version]
    # A patch that does not fit the view: the same.
    await page.evaluate(
        f"() => {{ const r = window.giantsClient.rooms.get({key});"
        f" window.giantsClient._onPatch({{room: {key}, from: r.version, to: r.version + 1, ops: [['del', ['nope']]], events: []}}); }}"
    )
    await wait_until(page, f"() => !window.giantsClient.rooms.get({key}).resyncing")
    assert (await page.evaluate(state))[0] == version
    # The page still plays: its move reaches bob.
    move = (await page.eval_on_selector_all("#legal-list [data-legal]", "els => els.map(e => e.dataset.legal)"))[0]
    await page.fill("#move-input", move)
    await page.press("#move-input", "Enter")
    await bob.wait_for(lambda r: r.game.get("last_move") == move, timeout=10)
