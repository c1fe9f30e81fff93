"""Speed and size of the wire protocol: codec and patch.

    python bench/protocol_wire.py [--plies 200] [--game giantslayer]

Prints a Markdown table: microseconds per operation for encode/decode (pydantic model
vs plain dict) and diff/apply, and the patch sizes of real games (random moves on the
named engine, seat 0's view wrapped in a RoomView-like document as the server sends).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engines.registry import get_engine
from protocol import (
    Act,
    apply_patch,
    decode_client,
    decode_server,
    diff,
    encode,
    legal_edit,
    patch_frame,
)
from protocol.messages import Patch


def per_call(fn: Callable[[], Any], seconds: float = 0.3) -> float:
    """Microseconds per call of fn, measured over about `seconds`."""
    n, start = 0, time.perf_counter()
    while True:
        for _ in range(200):
            fn()
        n += 200
        elapsed = time.perf_counter() - start
        if elapsed > seconds:
            return elapsed / n * 1e6


def room_view(game_view: Any, version: int, to_act: list[int]) -> dict[str, Any]:
    return {
        "room": {
            "id": "r-3f9a2c", "game": "giantslayer", "rules": "standard", "players": 2,
            "status": "playing",
            "seats": [{"seat": i, "name": f"p{i}", "connected": True, "bot": None} for i in range(2)],
            "to_act": to_act, "deadline": None, "version": version,
        },
        "game": game_view,
        "outcome": None,
    }  # fmt: skip


def play(game: str, plies: int, seed: int) -> list[tuple[Any, Any, list[Any]]]:
    """(old view, new view, events) for each ply of random games, seen by seat 0."""
    engine = get_engine(game)
    rng = random.Random(seed)
    out: list[tuple[Any, Any, list[Any]]] = []
    state = engine.new_game(2, {}, seed)
    version = 0
    while len(out) < plies:
        to_act = sorted(engine.to_act(state))
        if not to_act:
            state = engine.new_game(2, {}, rng.randrange(2**31))
            continue
        seat = to_act[0]
        action = rng.choice(engine.legal_actions(state, seat))
        old = room_view(engine.view(state, 0), version, to_act)
        text = engine.format_action(state, action)
        tr = engine.apply(state, seat, action)
        state, version = tr.state, version + 1
        new = room_view(engine.view(state, 0), version, sorted(engine.to_act(state)))
        events = [{"type": "action", "seat": seat, "action": text}, *tr.events]
        out.append((old, new, events))
    return out


def legal_pair(game: str, seed: int) -> tuple[list[str], list[str]]:
    """A seat's legal list at one of its turns and at its next turn, mid-game."""
    engine = get_engine(game)
    rng = random.Random(seed)
    state = engine.new_game(2, {}, seed)
    last: dict[int, list[str]] = {}
    pairs = []
    while engine.outcome(state) is None and len(pairs) < 40:
        seat = min(engine.to_act(state))
        legal = engine.legal_notation(state, seat)
        if seat in last:
            pairs.append((last[seat], legal))
        last[seat] = legal
        state = engine.apply(state, seat, rng.choice(engine.legal_actions(state, seat))).state
    return pairs[len(pairs) // 2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plies", type=int, default=300)
    parser.add_argument("--game", default="giantslayer")
    args = parser.parse_args()

    plies = play(args.game, args.plies, seed=1)
    old, new, events = plies[len(plies) // 2]
    ops = diff(old, new)
    push = patch_frame("r-3f9a2c", 5, 6, ops, events, [])
    push_bytes = encode(push)
    act = Act(id=17, room="r-3f9a2c", action="e5-e4", version=5)
    act_bytes = encode(act)

    rows = [
        ("encode patch push (plain dict)", per_call(lambda: encode(push))),
        (
            "encode patch push (pydantic model)",
            per_call(lambda: encode(Patch.model_validate(push))),
        ),
        ("encode act request (model)", per_call(lambda: encode(act))),
        ("decode_client act (msgpack + pydantic)", per_call(lambda: decode_client(act_bytes))),
        ("msgpack.unpackb act only", per_call(lambda: msgpack.unpackb(act_bytes))),
        ("decode_server patch push", per_call(lambda: decode_server(push_bytes))),
        ("diff one move (RoomView)", per_call(lambda: diff(old, new))),
        ("apply_patch copy-on-write", per_call(lambda: apply_patch(old, ops))),
    ]
    base, nxt = legal_pair(args.game, seed=1)
    joined = "\n".join(base)
    rows.append((f"legal edit, {len(base)} -> {len(nxt)} actions (join, split, protocol 3's legal_edit)",
                 per_call(lambda: legal_edit("\n".join(nxt) and joined.split("\n"), nxt))))
    print(f"| operation ({args.game}) | µs per call |\n|---|---|")
    for name, us in rows:
        print(f"| {name} | {us:.2f} |")

    frame_sizes, op_sizes, full_sizes, ratios = [], [], [], []
    for old, new, events in plies:
        ops = diff(old, new)
        assert apply_patch(old, ops) == new
        frame = encode(patch_frame("r-3f9a2c", 5, 6, ops, events, []))
        full = len(msgpack.packb(new, use_bin_type=True))
        frame_sizes.append(len(frame))
        op_sizes.append(len(msgpack.packb(ops, use_bin_type=True)))
        full_sizes.append(full)
        ratios.append(len(frame) / full)
    print(f"\n{len(plies)} plies of random {args.game}, seat 0's RoomView:\n")
    print("| bytes | median | p90 | max |\n|---|---|---|---|")
    for name, xs in (
        ("ops only", op_sizes),
        ("whole patch frame (ops + events)", frame_sizes),
        ("full view", full_sizes),
    ):
        xs = sorted(xs)
        print(f"| {name} | {statistics.median(xs):.0f} | {xs[int(len(xs) * 0.9)]} | {xs[-1]} |")
    print(f"\npatch frame / full view: median {statistics.median(ratios):.1%}")


if __name__ == "__main__":
    main()
