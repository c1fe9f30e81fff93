"""Giant's Causeway: the legal list written straight in notation (what a room sends).

`CausewayEngine.legal_notation` calls `legal_notation` here: the same strings, in the
same order, as formatting `legal_actions` one by one (the conformance suite checks
it), without building an action object per entry. A room asks for the list on every
move, and a position offers dozens of steps and leaps: each is written as the text of
its giant's cell plus the text of its target, with cell names kept once made
(`board.name`).
"""

from __future__ import annotations

from itertools import combinations, product
from typing import TYPE_CHECKING

from engines.causeway.board import (
    BLANK,
    BLANK_PIECE,
    DIRECTION_NAMES,
    DIRECTIONS,
    GIANT,
    MASK_BITS,
    PHASE_DESTROY,
    PHASE_OVER,
    PHASE_SETUP,
    SLIDES_SORTED,
    SPECIAL,
    SPIKEY,
    TRAPPER,
    CausewayState,
    Hex,
    around,
    frontier,
    frontier_of,
    known_name,
    known_ring,
    name,
    names,
    specials_out,
)
from engines.causeway.connected import joins_all, split_without
from engines.causeway.notation import PIECES

if TYPE_CHECKING:
    from engines.causeway.engine import CausewayEngine


# A leap's text up to its drops, after its giant's cell, by direction (GC-1's names).
LEAP_HEADS = tuple("^" + text for text in DIRECTION_NAMES)


def run_kinds(engine: CausewayEngine) -> tuple[dict[str | tuple[int, str], int], ...]:
    """`CausewayEngine.run_kinds`: by colour, what a leap makes of each piece it may run
    over (a cell's value in `stacks | giants`): 0 it stops there (a stack topped by the
    opponent's barrier / spellstone, GC-B5 / GC-S4, or a giant it may not leap), 1
    passed over (a stack of height 3, GC-B8, or a giant), 2 a drop may go there (GC-B6
    / GC-S5), 3 one would complete it without the mover's majority (two stones, none
    the mover's: GC-B7 / GC-S6; only in rule sets with barriers / spellstones). Every
    stack there can be (1-3 stones, GC-2) and every giant: one lookup where a run
    looks at a cell (a stack's str keeps its hash)."""
    special = engine.SPECIAL_NAME is not None
    stacks = ["".join(stones) for n in (1, 2, 3) for stones in product("wbWB", repeat=n)]
    tables = []
    for colour in (0, 1):
        table: dict[str | tuple[int, str], int] = {}
        for stack in stacks:
            if stack[-1] == SPECIAL[1 - colour]:
                table[stack] = 0
            elif len(stack) == 3:
                table[stack] = 1
            elif special and len(stack) == 2 and BLANK[colour] not in stack and SPECIAL[colour] not in stack:
                table[stack] = 3
            else:
                table[stack] = 2
        for owner in (0, 1):
            for kind in (GIANT, TRAPPER, SPIKEY):
                table[owner, kind] = 1 if kind in engine.leapable_kinds else 0
        tables.append(table)
    return tuple(tables)


def legal_notation(engine: CausewayEngine, state: CausewayState, seat: int) -> list[str]:
    """`engine.legal_actions(state, seat)` in notation, in the same order."""
    phase = state.phase
    if phase == PHASE_OVER or seat != state.to_move:
        return []
    if phase == PHASE_SETUP:
        return _placement_notation(state, seat)
    if phase == PHASE_DESTROY:
        return [f"destroy@{name(c)}" for c, owner in sorted(state.won.items()) if owner == seat]
    out: list[str] = []
    _giants_notation(engine, state, sorted(state.giants), seat, out)
    return out or ["pass"]


def _placement_notation(state: CausewayState, colour: int) -> list[str]:
    """`engine._placements` in notation, in the same order (GC-B2 / GC-S1: a blank
    beside any piece, a giant beside a stone that is not a giant)."""
    stacks, left = state.stacks, state.setup_left[colour]
    near_any = sorted(frontier(stacks, state.giants))
    texts = names(near_any)
    near_stone: list[str] | None = None
    out: list[str] = []
    for piece in PIECES:
        if piece not in left:
            continue
        head = piece + "@"
        if piece == BLANK_PIECE:
            out += [head + text for text in texts]
            continue
        if near_stone is None:
            near_stone = [text for c, text in zip(near_any, texts, strict=True)
                          if not stacks.keys().isdisjoint(known_ring(c) or around(c))]
        out += [head + text for text in near_stone]
    return out


def _giants_notation(engine: CausewayEngine, state: CausewayState, cells: list[Hex], colour: int, out: list[str]) -> None:
    """Append the steps and leaps of `colour`'s giants among those on `cells`, in turn
    (`_giant_actions`, in notation): one call for all, the engine's tables read once."""
    stacks, giants, supply = state.stacks, state.giants, state.supply[colour]
    trapping = engine.trapping_kinds
    rule = engine.STEP_RULE
    sizes = engine.drop_table[supply if supply < 2 else 2]  # by open stacks passed over
    kinds = engine.run_kinds[colour]
    out_before = -1  # the mover's barriers / spellstones out, once asked for
    append = out.append
    occupied = stacks | giants
    for cell in cells:
        if giants[cell][0] != colour:  # (a comprehension to pick them first: a call more)
            continue
        start = known_name(cell) or name(cell)
        # The giant's ring, read once for its trap, its steps, its leaps and the GC-3 split
        ring = known_ring(cell) or around(cell)
        a, b, c, d, e, f = ring  # `ring_mask`, written out
        mask = ((a in occupied) | (b in occupied) << 1 | (c in occupied) << 2 | (d in occupied) << 3
                | (e in occupied) << 4 | (f in occupied) << 5)
        # `engine.is_trapped`, walked here over the occupied cells of the ring only
        trapped = False
        for i in MASK_BITS[mask]:
            n = ring[i]
            giant = giants.get(n)
            if giant is not None and giant[0] != colour and giant[1] in trapping:
                for m in known_ring(n) or around(n):  # does it touch anything but `cell`?
                    if m != cell and m in occupied:
                        break
                else:
                    trapped = True
                    break
        if supply > 0:
            head = start + ">"
            if trapped or rule is None:
                out.extend([head + n for n in engine.step_names(state, cell, trapped, mask)])
            elif rule == "frontier":  # GC-B4: `Barrier.step_names`
                # One join and one split (both in C; no name holds a line break) write the
                # ~30 texts for about 3/4 of what a comprehension's concatenations cost.
                texts = frontier_of(state)[1]
                if texts:
                    out += (head + ("\n" + head).join(texts)).split("\n")
            else:  # "slide", GC-S2 / GC-S3: `Spellstone.step_targets`, named
                traps = engine.trap_steps(state, colour, occupied) if giants[cell][1] == TRAPPER else None
                if traps:  # (no comprehension: a call each)
                    ends = list(map(ring.__getitem__, SLIDES_SORTED[mask]))
                    ends += traps
                    ends.sort()
                    for end in ends:
                        append(head + (known_name(end) or name(end)))
                else:
                    for i in SLIDES_SORTED[mask]:
                        append(head + (known_name(ring[i]) or name(ring[i])))
        if trapped:  # GC-B5 / GC-S3: a trapped giant never leaps
            continue
        # A leap's run (`_leap_run`, walked here) starts on the neighbour in its direction:
        # only occupied ones can, and the GC-3 split is worked out only once some run is
        # found (most giants have one arc of neighbours: no split).
        split: list[set[Hex]] | None = None
        unsplit = True  # `split` not worked out yet
        for direction in MASK_BITS[mask]:
            landing = ring[direction]
            dq, dr = DIRECTIONS[direction]
            open_stacks: list[Hex] = []  # the stacks passed over that take a drop
            lacking = 0  # how many of them a drop completes without the mover's majority
            while True:
                here = occupied.get(landing)  # a stack's stones or a giant (GC-2: not both)
                if here is None:
                    break  # it lands here
                kind = kinds[here]
                if not kind:
                    break  # blocked
                if kind > 1:
                    open_stacks.append(landing)
                    if kind > 2:
                        lacking += 1
                landing = (landing[0] + dq, landing[1] + dr)
            if here is not None:
                continue  # blocked
            if unsplit:
                split, unsplit = split_without(occupied, cell, mask), False
            if split is not None and not joins_all(split, landing, occupied, cell):  # GC-3 (None: one group)
                continue
            head = start + LEAP_HEADS[direction]
            count = len(open_stacks)
            # A choice is asked for only where a drop completes a tower without the mover's
            # majority and they have the limit out already (`_choice_sets`, GC-B7 / GC-S6:
            # dropping on fewer of these stacks lacks fewer): otherwise every drop set is
            # written as it is, in `combinations` order (by first target, then second).
            plain = not lacking
            if not plain:
                if out_before < 0:
                    out_before = specials_out(state, colour)
                plain = out_before + lacking <= engine.SPECIAL_LIMIT
            nms: list[str] | None = None  # the open stacks' names, once a drop needs them
            prefix = head + "+"
            for size in sizes[count if count < 2 else 2]:
                if size == 0:
                    append(head)
                    continue
                if plain and size <= 2:
                    if nms is None:  # (a few stacks: a comprehension's call costs more than the loop)
                        nms = []
                        for target in open_stacks:
                            nms.append(known_name(target) or name(target))
                    if size == 1:
                        for text in nms:
                            append(prefix + text)
                    else:
                        for i in range(count - 1):
                            text = prefix + nms[i] + "+"
                            for other in nms[i + 1:]:
                                append(text + other)
                    continue
                for targets in combinations(open_stacks, size):  # keeps the order passed over
                    for choices in engine._choice_sets(state, colour, targets):
                        text = head
                        for target, choice in zip(targets, choices, strict=True):
                            text += "+" + name(target)
                            if choice is not None:
                                text += "/" + name(choice)
                        append(text)
