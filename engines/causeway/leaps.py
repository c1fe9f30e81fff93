"""Giant's Causeway's leaps: their runs, drops and barrier / spellstone choices.

`CausewayEngine` (engines.causeway.engine) inherits this; `legal_text` writes the
legal list from `_leap_run` and `_choice_sets`. A leap runs over leapable stacks and
giants in one direction to the first empty cell without splitting the Causeway (GC-3,
GC-B5, GC-S4), dropping blanks on distinct open stacks passed over, in path order
(GC-B6, GC-S5); a drop that completes a tower without a majority asks for a choice
(GC-B7, GC-S6, GC-Q1). The rule set's hooks it calls are declared below and defined by
`CausewayEngine`'s subclasses.
"""

from __future__ import annotations

from itertools import combinations, pairwise
from typing import ClassVar

from engines.causeway.board import (
    BLANK,
    COLOUR_NAMES,
    DIRECTION_NAMES,
    DIRECTIONS,
    SPECIAL,
    STONE_COLOUR,
    CausewayState,
    Hex,
    Work,
    cell_name,
    known_name,
    name,
    specials_out,
)
from engines.causeway.connected import joins_all, split_without
from engines.causeway.notation import Drop, Leap


class Leaping:
    """Mixin for CausewayEngine: listing, checking and playing leaps."""

    SPECIAL_NAME: ClassVar[str | None]
    SPECIAL_LIMIT: ClassVar[int] = 3  # barriers (GC-B7) / spellstones (GC-S6) a player may have out

    # The rule set's hooks (CausewayEngine documents them).
    def leapable(self, kind: str) -> bool:
        raise NotImplementedError

    def drop_sizes(self, droppable: int, supply: int) -> list[int]:
        raise NotImplementedError

    def special_choices(self, work: Work, colour: int, cell: Hex) -> list[Hex | None]:
        raise NotImplementedError

    def no_majority(self, work: Work, colour: int, cell: Hex, choice: Hex | None) -> None:
        raise NotImplementedError

    def drop_end(self, work: Work) -> str | None:
        raise NotImplementedError

    def _leap_run(
        self, state: CausewayState, start: Hex, colour: int, direction: int, split: list[set[Hex]] | None
    ) -> tuple[list[Hex], Hex] | None:
        """The cells a leap passes over and its landing cell, or None if it is illegal.

        `split` is `split_without(..., start)`: how the Causeway parts without the giant.
        """
        stacks, giants = state.stacks, state.giants
        dq, dr = DIRECTIONS[direction]
        blocker = SPECIAL[1 - colour]
        run: list[Hex] = []
        q, r = start[0] + dq, start[1] + dr
        while True:
            cell = (q, r)
            stack = stacks.get(cell)
            if stack is not None:
                if stack[-1] == blocker:  # GC-B5 / GC-S4: opponent's barrier / spellstone
                    return None
            else:
                giant = giants.get(cell)
                if giant is None:
                    break
                if not self.leapable(giant[1]):
                    return None
            run.append(cell)
            q, r = q + dq, r + dr
        if not run or (split is not None and not joins_all(split, cell, stacks | giants, start)):  # GC-3
            return None
        return run, cell

    def _leaps(
        self, state: CausewayState, start: Hex, colour: int, direction: int, split: list[set[Hex]] | None
    ) -> list[Leap]:
        found = self._leap_run(state, start, colour, direction, split)
        if found is None:
            return []
        run, _ = found
        stacks = state.stacks
        open_stacks = [c for c in run if c in stacks and len(stacks[c]) < 3]
        leaps = []
        for size in self.drop_sizes(len(open_stacks), state.supply[colour]):
            for targets in combinations(open_stacks, size):  # keeps the order passed over
                for choices in self._choice_sets(state, colour, targets):
                    drops = tuple(Drop(c, ch) for c, ch in zip(targets, choices, strict=True))
                    leaps.append(Leap(start, direction, drops))
        return leaps

    def _choice_sets(
        self, state: CausewayState, colour: int, targets: tuple[Hex, ...]
    ) -> list[tuple[Hex | None, ...]]:
        """Every combination of barrier / spellstone choices the drops may need."""
        stacks = state.stacks
        if self.SPECIAL_NAME is None:
            return [(None,) * len(targets)]
        lacking = sum(1 for c in targets if len(stacks[c]) == 2 and not _has_colour(stacks[c], colour))
        # No drop completes a tower without a majority, or each that does finds fewer than
        # the limit of the mover's barriers / spellstones out (GC-B7, GC-S6: it adds one):
        # nothing to choose, and the walk below would find just that.
        if not lacking or specials_out(state, colour) + lacking <= self.SPECIAL_LIMIT:
            return [(None,) * len(targets)]
        return self._choice_walk(state, colour, targets)

    def _choice_walk(
        self, state: CausewayState, colour: int, targets: tuple[Hex, ...]
    ) -> list[tuple[Hex | None, ...]]:
        """`_choice_sets` the plain way: resolve the drops in order on copies, branching
        on every choice a completion asks for."""
        out: list[tuple[Hex | None, ...]] = []

        def walk(work: Work, index: int, chosen: tuple[Hex | None, ...]) -> None:
            if index == len(targets) or work.end is not None:
                out.append(chosen + (None,) * (len(targets) - len(chosen)))
                return
            for choice in self._drop_choices(work, colour, targets[index]):
                branch = Work(dict(work.stacks), work.giants, list(work.supply), dict(work.won), {})
                self._resolve_drop(branch, colour, targets[index], choice)
                walk(branch, index + 1, (*chosen, choice))

        walk(Work.of(state), 0, ())
        return out

    def _drop_choices(self, work: Work, colour: int, cell: Hex) -> list[Hex | None]:
        stack = work.stacks[cell]
        if len(stack) == 2 and not _has_colour(stack, colour):
            return self.special_choices(work, colour, cell)
        return [None]

    def _resolve_drop(self, work: Work, colour: int, cell: Hex, choice: Hex | None) -> None:
        """Drop one blank on `cell` and settle a completion (GC-B7 / GC-S6 / GC-Q1)."""
        stack = work.stacks[cell]
        if len(stack) < 2:
            work.stacks[cell] = stack + BLANK[colour]
            work.supply[colour] -= 1
        elif _has_colour(stack, colour):
            work.stacks[cell] = stack + BLANK[colour]
            work.supply[colour] -= 1
            work.won[cell] = colour
            work.events.append({"type": "tower_won", "colour": COLOUR_NAMES[colour], "cell": cell_name(cell)})
        else:
            self.no_majority(work, colour, cell, choice)
        work.end = self.drop_end(work)


    def _is_leap(self, state: CausewayState, colour: int, leap: Leap) -> bool:
        """Is `leap` one of `_leaps` for its start and direction (found without listing them)?"""
        split = split_without(state.stacks | state.giants, leap.start)
        drops = leap.drops
        if type(drops) is not tuple or not all(type(d) is Drop for d in drops):
            return leap in self._leaps(state, leap.start, colour, leap.direction, split)
        found = self._leap_run(state, leap.start, colour, leap.direction, split)
        if found is None:
            return False
        stacks = state.stacks
        open_stacks = [c for c in found[0] if c in stacks and len(stacks[c]) < 3]
        if len(drops) not in self.drop_sizes(len(open_stacks), state.supply[colour]):
            return False
        targets = tuple(d.cell for d in drops)
        # `combinations` keeps the order passed over: distinct open stacks, in path order
        at = [open_stacks.index(t) if t in open_stacks else -1 for t in targets]
        if any(i < 0 for i in at) or any(a >= b for a, b in pairwise(at)):
            return False
        return tuple(d.choice for d in drops) in self._choice_sets(state, colour, targets)

    def _do_leap(self, state: CausewayState, work: Work, colour: int, leap: Leap) -> None:
        # Already checked legal, so the GC-3 test can be skipped (split None).
        run, landing = self._leap_run(state, leap.start, colour, leap.direction, None) or ([], leap.start)
        work.giants[landing] = work.giants.pop(leap.start)
        work.events.append({
            "type": "leap",
            "colour": COLOUR_NAMES[colour],
            "from": known_name(leap.start) or name(leap.start),
            "to": known_name(landing) or name(landing),
            "direction": DIRECTION_NAMES[leap.direction],
            "over": [known_name(c) or name(c) for c in run],
            "drops": [known_name(d.cell) or name(d.cell) for d in leap.drops],
        })
        for drop in leap.drops:
            self._resolve_drop(work, colour, drop.cell, drop.choice)
            if work.end is not None:
                break  # GC-B9 / GC-S7 / GC-Q2: the game ends at once; later drops are void


def _has_colour(stack: str, colour: int) -> bool:
    """Does `colour` own at least one stone of the stack (a majority once a third lands)?"""
    return any(STONE_COLOUR[s] == colour for s in stack)
