"""Build Giant's Causeway positions for rule tests from a readable cell list.

    position("barrier", '''
        0,0:w   1,0:bw   2,0:bbW
        -1,0:@w          3,0:@b
    ''')

Each token is `q,r:content`. Content is a stack, bottom to top (`w`/`b` blanks,
`W`/`B` barriers or spellstones), or a giant: `@w` / `@b` (barrier edition), `@wt` /
`@ws` / `@bt` / `@bs` (white/black trapper/spikey). The position is in the play phase
with White to move unless told otherwise.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from engines import get_engine, hexgrid
from engines.causeway import CausewayEngine, CausewayState, cell_name, parse_cell

KINDS = {"": "giant", "t": "trapper", "s": "spikey"}


def engine(rules: str) -> CausewayEngine:
    found = get_engine("causeway", rules)
    assert isinstance(found, CausewayEngine)
    return found


def cell(text: str) -> tuple[int, int]:
    found = parse_cell(text)
    assert found is not None, text
    return found


def position(
    rules: str,
    picture: str,
    to_move: int = 0,
    supply: tuple[int, int] = (15, 15),
    won: str = "",
    ply: int = 20,
) -> CausewayState:
    """A play-phase position; `won` lists counting towers as `q,r:w q,r:b`."""
    stacks: dict[tuple[int, int], str] = {}
    giants: dict[tuple[int, int], tuple[int, str]] = {}
    for token in picture.split():
        where, _, what = token.partition(":")
        if what.startswith("@"):
            giants[cell(where)] = ("wb".index(what[1]), KINDS[what[2:]])
        else:
            assert what and set(what) <= set("wbWB"), token
            stacks[cell(where)] = what
    won_map = {}
    for token in won.split():
        where, _, who = token.partition(":")
        won_map[cell(where)] = "wb".index(who)
    return CausewayState(
        stacks=stacks,
        giants=giants,
        supply=supply,
        setup_left=((), ()),
        won=won_map,
        destroyed={},
        to_move=to_move,
        phase="play",
        ply=ply,
        history=(),
    )


def legal(rules: str, state: CausewayState) -> set[str]:
    """The legal actions of the side to move, in notation."""
    e = engine(rules)
    return {e.format_action(state, a) for a in e.legal_actions(state, state.to_move)}


def play(rules: str, state: CausewayState, *moves: str) -> CausewayState:
    e = engine(rules)
    for text in moves:
        state = e.apply_text(state, state.to_move, text).state
    return state


def events(rules: str, state: CausewayState, move: str) -> list[dict[str, Any]]:
    return list(engine(rules).apply_text(state, state.to_move, move).events)


def stacks(state: CausewayState) -> dict[str, str]:
    return {cell_name(c): s for c, s in state.stacks.items()}


def giants(state: CausewayState) -> dict[str, tuple[int, str]]:
    return {cell_name(c): g for c, g in state.giants.items()}


def positions(engine: CausewayEngine, seeds: range) -> Iterator[CausewayState]:
    """Every position of random games (the move chosen from the legal list in notation)."""
    for seed in seeds:
        rng = random.Random(seed)
        state = engine.new_game(2, {}, seed)
        while engine.outcome(state) is None:
            yield state
            seat = state.to_move
            text = rng.choice(engine.legal_notation(state, seat))
            state = engine.apply(state, seat, engine.parse_action(state, seat, text)).state
        yield state


def random_causeways(count: int, seed: int) -> Iterator[CausewayState]:
    """Positions of random shapes (stacks and giants scattered round a growing group,
    holes and branches included) with giants between two or three arcs of neighbours."""
    rng = random.Random(seed)
    for _ in range(count):
        cells = [(0, 0)]
        occupied = {(0, 0)}
        for _ in range(rng.randrange(4, 40)):
            base = rng.choice(cells)
            n = rng.choice(hexgrid.neighbors(base))
            if n not in occupied:
                occupied.add(n)
                cells.append(n)
        giants = {c: (rng.randrange(2), "giant") for c in rng.sample(cells, min(len(cells), 6))}
        stacks = {c: "w" for c in cells if c not in giants}
        yield CausewayState(stacks, giants, (15, 15), ((), ()), {}, {}, 0, "play", 20)
