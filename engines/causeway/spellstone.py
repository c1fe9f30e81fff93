"""Giant's Causeway, Spellstone edition (seed 001): rule sets `spellstone` and `quick`.

Steps go to an adjacent cell past the slide rule (GC-S2); the trapper may instead
step next to a lone opponent giant and freeze it (GC-S3); spikey giants and the
opponent's spellstones block leaps, trappers do not (GC-S4); leaps drop 0-2 blanks
(GC-S5); a completion without a majority becomes a spellstone (GC-S6). `Quick` drops
the spellstones (GC-Q1) and ends at three height-3 stacks (GC-Q2).
"""

from __future__ import annotations

from collections.abc import Container
from typing import ClassVar

from engines.base import GameInfo
from engines.causeway.board import (
    BLANK,
    SLIDES_SORTED,
    SPECIAL,
    SPIKEY,
    STONE_COLOUR,
    TRAP_GATES,
    TRAPPER,
    CausewayState,
    Hex,
    Work,
    around,
    cell_name,
    known_ring,
)
from engines.causeway.engine import CausewayEngine
from engines.registry import register

SPELLSTONE_LIMIT = 3  # GC-S6

# TRAP_GATES' gates with the directions of the gate cell's other three neighbours
# (i - 1, i and i + 1: the cells `trap_steps` finds empty), by ring mask.
TRAP_CHECKS: tuple[tuple[tuple[int, int, int], ...], ...] = tuple(
    tuple((i, (i - 1) % 6, (i + 1) % 6) for i in gates) for gates in TRAP_GATES
)
PLY_CAP = 300  # GC-S7

SUMMARY = "Giants step and leap over a growing hex causeway, building towers"


@register
class Spellstone(CausewayEngine):
    info = GameInfo(
        name="causeway",
        title="Giant's Causeway",
        rules="spellstone",
        min_players=2,
        max_players=2,
        hidden_information=False,
        chance=False,
        simultaneous=False,
        max_plies=PLY_CAP,  # GC-S7, setup plies included
        summary=SUMMARY + "; spellstone edition: trapper and spikey giants, spellstones",
        spec="shared/specs/causeway.md",
    )

    # GC-S1: the 6-stone start of the surviving drawing.
    SETUP_STACKS: ClassVar[dict[Hex, str]] = {
        (0, 0): "w", (1, -2): "w", (-1, -1): "w",
        (0, -1): "b", (1, 0): "b", (-1, 1): "b",
    }
    SETUP_PIECES = (TRAPPER, SPIKEY)
    START_SUPPLY = 17  # 20 blanks, 3 on the board
    PLY_CAP = PLY_CAP
    SPECIAL_NAME: ClassVar[str | None] = "spellstone"
    SPECIAL_LIMIT = SPELLSTONE_LIMIT
    STEP_RULE = "slide"  # GC-S2 / GC-S3, as step_targets below

    def traps(self, kind: str) -> bool:
        return kind == TRAPPER  # GC-S3

    def leapable(self, kind: str) -> bool:
        return kind != SPIKEY  # GC-S4

    def step_targets(self, state: CausewayState, cell: Hex, trapped: bool, mask: int = -1) -> list[Hex]:
        """GC-S2 adjacent steps past the slide rule, plus GC-S3 trap steps for a trapper."""
        if trapped:
            return []  # GC-S3: a trapped giant cannot move at all
        stacks, giants = state.stacks, state.giants
        ring = known_ring(cell) or around(cell)
        if mask < 0:
            a, b, c, d, e, f = ring  # `ring_mask`, written out: the slide rule's table by it
            mask = ((a in stacks or a in giants) | (b in stacks or b in giants) << 1
                    | (c in stacks or c in giants) << 2 | (d in stacks or d in giants) << 3
                    | (e in stacks or e in giants) << 4 | (f in stacks or f in giants) << 5)
        slides = SLIDES_SORTED[mask]
        targets = list(map(ring.__getitem__, slides))  # sorted by cell already
        colour, kind = giants[cell]
        if kind == TRAPPER:
            traps = self.trap_steps(state, colour)
            if traps:
                return sorted(targets + traps)
        return targets

    def trap_steps(self, state: CausewayState, colour: int, occupied: Container[Hex] | None = None) -> list[Hex]:
        giants = state.giants
        if occupied is None:
            occupied = state.stacks | giants
        traps: list[Hex] = []
        for other, giant in giants.items():
            if giant[0] == colour:
                continue
            # An empty cell whose only occupied neighbour is `other`. The laid blank
            # stays on the trapper's cell, so a cell beside it never qualifies (nor one
            # of its slides), nor one beside another giant. The i-th cell around `other`
            # shares with it the cells around it on either side (i - 1 and i + 1),
            # so those must be empty too; its other three neighbours lie in
            # directions i - 1, i and i + 1 from it.
            ring = known_ring(other) or around(other)
            a, b, c, d, e, f = ring  # `ring_mask`, written out
            for i, j, k in TRAP_CHECKS[(a in occupied) | (b in occupied) << 1 | (c in occupied) << 2
                                       | (d in occupied) << 3 | (e in occupied) << 4 | (f in occupied) << 5]:
                x = ring[i]
                outer = known_ring(x) or around(x)
                if not (outer[j] in occupied or outer[i] in occupied or outer[k] in occupied):
                    traps.append(x)
        return traps

    def drop_sizes(self, droppable: int, supply: int) -> list[int]:
        return [k for k in (0, 1, 2) if k <= droppable and k <= supply]  # GC-S5

    def special_choices(self, work: Work, colour: int, cell: Hex) -> list[Hex | None]:
        own = work.specials(colour)
        return list(own) if len(own) >= SPELLSTONE_LIMIT else [None]

    def no_majority(self, work: Work, colour: int, cell: Hex, choice: Hex | None) -> None:
        """GC-S6: a spellstone tops the tower (the blank returns); a 4th turns an old one."""
        if choice is not None:
            work.stacks[choice] = work.stacks[choice][:-1] + BLANK[colour]  # dead tower
        work.stacks[cell] += SPECIAL[colour]
        work.events.append({
            "type": "spellstone",
            "colour": "white" if colour == 0 else "black",
            "cell": cell_name(cell),
            "turned": None if choice is None else cell_name(choice),
        })

    def drop_end(self, work: Work) -> str | None:
        owners = list(work.won.values())  # counted in C: this runs after every drop
        for colour in (0, 1):
            if owners.count(colour) >= 3:
                return "three_towers"  # GC-S7
        return None

    def score(self, state: CausewayState, colour: int) -> float:
        return float(sum(1 for owner in state.won.values() if owner == colour))

    def result_key(self, state: CausewayState, colour: int) -> tuple[int, ...]:
        """GC-S7: most scored towers, then most spellstones in play."""
        spells = sum(1 for s in state.stacks.values() if s[-1] == SPECIAL[colour])
        return (int(self.score(state, colour)), spells)


@register
class Quick(Spellstone):
    info = GameInfo(
        name="causeway",
        title="Giant's Causeway",
        rules="quick",
        min_players=2,
        max_players=2,
        hidden_information=False,
        chance=False,
        simultaneous=False,
        max_plies=PLY_CAP,
        summary=SUMMARY + "; quick variant: no spellstones, first three towers decide",
        spec="shared/specs/causeway.md",
    )
    SPECIAL_NAME = None

    def special_choices(self, work: Work, colour: int, cell: Hex) -> list[Hex | None]:
        return [None]

    def no_majority(self, work: Work, colour: int, cell: Hex, choice: Hex | None) -> None:
        """GC-Q1: the blank stays and the tower is dead."""
        work.stacks[cell] += BLANK[colour]
        work.supply[colour] -= 1
        work.events.append({"type": "dead_tower", "colour": "white" if colour == 0 else "black", "cell": cell_name(cell)})

    def drop_end(self, work: Work) -> str | None:
        full = list(map(len, work.stacks.values())).count(3)  # counted in C: after every drop
        return "three_stacks" if full >= 3 else None  # GC-Q2

    def score(self, state: CausewayState, colour: int) -> float:
        """GC-Q2: this colour's stones in height-3 stacks."""
        return float(
            sum(1 for s in state.stacks.values() if len(s) == 3 for ch in s if STONE_COLOUR[ch] == colour)
        )

    def result_key(self, state: CausewayState, colour: int) -> tuple[int, ...]:
        return (int(self.score(state, colour)),)
