"""Giant's Causeway, Barrier edition (seed 000): rule set `barrier`, the game's default.

Steps teleport the giant anywhere beside the Causeway (GC-B4), trapped giants escape
only beside the blank they lay (GC-B3), leaps drop 1-2 blanks (GC-B6), a completion
without a majority puts a barrier on top (GC-B7), and running out of blanks ends the
game after a destroy step (GC-B10, see `needs_destroy`).
"""

from __future__ import annotations

from typing import ClassVar

from engines.base import GameInfo
from engines.causeway.board import (
    BLANK_PIECE,
    GIANT,
    SPECIAL,
    CausewayState,
    Hex,
    Work,
    cell_name,
    frontier_of,
    neighbours,
)
from engines.causeway.engine import CausewayEngine
from engines.registry import register

BARRIER_LIMIT = 3  # GC-B7
PLY_CAP = 200  # GC-B11

@register
class Barrier(CausewayEngine):
    info = GameInfo(
        name="causeway",
        title="Giant's Causeway",
        rules="barrier",
        min_players=2,
        max_players=2,
        hidden_information=False,
        chance=False,
        simultaneous=False,
        # GC-B11 caps every game at 200 plies (setup included); the GC-B10 destroy step
        # can follow the last one.
        max_plies=PLY_CAP + 1,
        summary="Giants step and leap over a growing hex causeway, building towers; "
        "barrier edition: teleporting steps, traps and barriers",
        spec="shared/specs/causeway.md",
    )

    SETUP_STACKS: ClassVar[dict[Hex, str]] = {(0, 0): "w", (1, 0): "b"}  # GC-B1
    SETUP_PIECES = (GIANT, GIANT, BLANK_PIECE)  # GC-B2
    START_SUPPLY = 20  # 21 blanks, one already on the board
    PLY_CAP = PLY_CAP
    SPECIAL_NAME = "barrier"
    SPECIAL_LIMIT = BARRIER_LIMIT
    STEP_RULE = "frontier"  # GC-B4, as step_names below

    def traps(self, kind: str) -> bool:
        return True  # GC-B3: either giant traps

    def leapable(self, kind: str) -> bool:
        return False  # GC-B5: no leap passes over a giant

    def step_targets(self, state: CausewayState, cell: Hex, trapped: bool, mask: int = -1) -> list[Hex]:
        """GC-B4: any empty cell beside the Causeway; a trapped giant only beside its blank."""
        if trapped:
            return [n for n in sorted(neighbours(cell)) if not state.occupied(n)]
        # The giant's own cell keeps counting as occupied: the blank laid there stays.
        return frontier_of(state)[0]

    def step_names(self, state: CausewayState, cell: Hex, trapped: bool, mask: int = -1) -> list[str]:
        return super().step_names(state, cell, trapped) if trapped else frontier_of(state)[1]

    def drop_sizes(self, droppable: int, supply: int) -> list[int]:
        """GC-B6: 1 or 2; none only when no jumped stack is below height 3."""
        if droppable == 0:
            return [0]
        return [k for k in (1, 2) if k <= droppable and k <= supply]

    def special_choices(self, work: Work, colour: int, cell: Hex) -> list[Hex | None]:
        own = work.specials(colour)
        return list(own) if len(own) >= BARRIER_LIMIT else [None]

    def no_majority(self, work: Work, colour: int, cell: Hex, choice: Hex | None) -> None:
        """GC-B7: the blank goes back to supply and a barrier tops the tower instead."""
        if choice is not None:
            work.stacks[choice] = work.stacks[choice][:-1]  # that tower falls back to height 2
        work.stacks[cell] += SPECIAL[colour]
        work.events.append({
            "type": "barrier",
            "colour": "white" if colour == 0 else "black",
            "cell": cell_name(cell),
            "moved_from": None if choice is None else cell_name(choice),
        })

    def drop_end(self, work: Work) -> str | None:
        owners = list(work.won.values())  # counted in C: this runs after every drop
        for colour in (0, 1):
            if owners.count(colour) >= 3:
                return "three_towers"  # GC-B9
        return None

    def move_end(self, work: Work, mover: int) -> str | None:
        return "out_of_stones" if work.supply[mover] <= 0 else None  # GC-B10

    def needs_destroy(self, work: Work, mover: int) -> bool:
        """GC-B10 (DECIDED here): the destroy is a follow-up action of the mover, offered
        whenever they hold a won tower (which one never changes the result, but the
        player says which tower falls)."""
        return any(owner == mover for owner in work.won.values())

    def score(self, state: CausewayState, colour: int) -> float:
        return float(sum(1 for owner in state.won.values() if owner == colour))

    def result_key(self, state: CausewayState, colour: int) -> tuple[int, ...]:
        """GC-B10: most won towers, then most barriers on the board."""
        barriers = sum(1 for s in state.stacks.values() if s[-1] == SPECIAL[colour])
        return (int(self.score(state, colour)), barriers)
