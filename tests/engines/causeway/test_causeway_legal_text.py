"""The legal list written straight in notation (engines.causeway.legal_text) is the
general path's list: `legal_actions` formatted one by one, same entries, same order.

`_giant_notation` works out whether a giant is trapped (GC-B3, GC-S3) on the occupied
cells of its ring only, writes a free giant's steps from the kept frontier (GC-B4) or
the slide table plus the trapper's `trap_steps` (GC-S2, GC-S3) without asking
`step_names`, reads which giants trap and which may be leapt over (GC-B5, GC-S4)
from sets made once from the hooks, and what a leap's run makes of each stack and
giant (GC-B5..B8, GC-S4..S6) from tables made once (`run_kinds`), with the Causeway's
cells in one map (`stacks | giants`) for the GC-3 split and the trap steps: checked
here over seeded random games and crowded random positions of every rule set.
"""

from __future__ import annotations

import pytest
from test_causeway_fast_paths import RULES, crowded_causeways, positions

from engines.causeway.board import (
    DIRECTIONS,
    GIANT,
    PHASE_PLAY,
    SPIKEY,
    STONE_COLOUR,
    TRAP_GATES,
    TRAPPER,
)
from engines.causeway.engine import CausewayEngine
from engines.causeway.legal_text import legal_notation
from engines.causeway.spellstone import TRAP_CHECKS
from engines.registry import get_engine


def engine_for(rules: str) -> CausewayEngine:
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    return engine


@pytest.mark.parametrize("rules", RULES)
def test_the_kind_sets_are_the_hooks(rules: str) -> None:
    """GC-B3 / GC-S3 (who traps) and GC-B5 / GC-S4 (who may be leapt over)."""
    engine = engine_for(rules)
    for kind in (GIANT, TRAPPER, SPIKEY):
        assert (kind in engine.trapping_kinds) == engine.traps(kind)
        assert (kind in engine.leapable_kinds) == engine.leapable(kind)


@pytest.mark.parametrize("rules", RULES)
def test_the_run_kinds_are_the_plain_leap_rules(rules: str) -> None:
    """What a leap's run makes of each piece it meets (`run_kinds`, one lookup a cell) is
    what the plain rules say: it stops at a stack topped by the opponent's barrier /
    spellstone and at a giant the hook says may not be leapt (GC-B5 / GC-S4), a drop may
    go on a stack below height 3 (GC-B6 / GC-S5, GC-B8), and a two-stone stack holding
    none of the mover's stones is one a drop completes without a majority (GC-B7 /
    GC-S6), which only rule sets with barriers / spellstones count (GC-Q1)."""
    engine = engine_for(rules)
    for colour in (0, 1):
        table = engine.run_kinds[colour]
        stacks = [key for key in table if isinstance(key, str)]
        assert len(stacks) == 4 + 4 ** 2 + 4 ** 3 and len(table) == len(stacks) + 6  # every stack, every giant
        for stack in stacks:
            if STONE_COLOUR[stack[-1]] != colour and stack[-1].isupper():
                expected = 0
            elif len(stack) == 3:
                expected = 1
            elif (engine.SPECIAL_NAME is not None and len(stack) == 2
                  and all(STONE_COLOUR[stone] != colour for stone in stack)):
                expected = 3
            else:
                expected = 2
            assert table[stack] == expected, (colour, stack)
        for owner in (0, 1):
            for kind in (GIANT, TRAPPER, SPIKEY):
                assert table[owner, kind] == (1 if engine.leapable(kind) else 0), (colour, owner, kind)


@pytest.mark.parametrize("rules", RULES)
def test_the_list_of_random_games_is_the_general_path(rules: str) -> None:
    """GC-B2..B7 / GC-S1..S6 / GC-Q1: every position of 40 seeded random games, both
    seats, equal to `legal_actions` formatted, in order; trapped giants (GC-B3 / GC-S3)
    and, outside barrier, trap steps (GC-S3) among them."""
    engine = engine_for(rules)
    trapped = trap_steps = 0
    for state in positions(engine, range(100, 140)):
        for seat in (0, 1):
            expected = [engine.format_action(state, a) for a in engine.legal_actions(state, seat)]
            assert legal_notation(engine, state, seat) == expected
            if state.phase == PHASE_PLAY and seat == state.to_move:
                for cell, (colour, kind) in state.giants.items():
                    if colour == seat:
                        trapped += engine.is_trapped(state, cell, seat)
                        if kind == TRAPPER:
                            trap_steps += bool(engine.trap_steps(state, seat))
    assert trapped > 0 and (trap_steps > 0 or rules == "barrier"), (trapped, trap_steps)


@pytest.mark.parametrize("rules", RULES)
def test_the_list_of_crowded_positions_is_the_general_path(rules: str) -> None:
    """The same over crowded random positions (every stack height, giants anywhere,
    low supplies: GC-B4's and GC-S2's steps with no blank left are not listed)."""
    engine = engine_for(rules)
    trapped = 0
    for state in crowded_causeways(rules, 600, 23):
        seat = state.to_move
        expected = [engine.format_action(state, a) for a in engine.legal_actions(state, seat)]
        assert legal_notation(engine, state, seat) == expected
        trapped += any(engine.is_trapped(state, c, seat) for c, g in state.giants.items() if g[0] == seat)
    assert trapped >= 5, trapped


def test_the_trap_checks_are_the_gates_with_the_gate_cells_outer_neighbours() -> None:
    """GC-S3's trap steps: a gate cell (TRAP_GATES) qualifies when its three neighbours
    off the giant's ring, in directions i - 1, i and i + 1 from it, are empty."""
    for mask in range(64):
        assert [i for i, _, _ in TRAP_CHECKS[mask]] == list(TRAP_GATES[mask])
        for i, j, k in TRAP_CHECKS[mask]:
            assert {j, i, k} == {(i - 1) % 6, i, (i + 1) % 6}
            gate = DIRECTIONS[i]
            outer = {(gate[0] + DIRECTIONS[d][0], gate[1] + DIRECTIONS[d][1]) for d in (j, i, k)}
            # exactly the gate cell's neighbours that are neither the giant nor on its ring
            ring = set(DIRECTIONS)
            plain = {(gate[0] + dq, gate[1] + dr) for dq, dr in DIRECTIONS} - ring - {(0, 0)}
            assert outer == plain
