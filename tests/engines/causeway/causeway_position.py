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

from typing import Any

from engines import get_engine
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
