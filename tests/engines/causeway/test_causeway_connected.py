"""GC-3 (engines/causeway/connected.py): the split of the Causeway without a leaping
giant, and whether a landing joins it again, agree with the plain groups worked out
cell by cell, over random games and random shapes in every rule set.
"""

from __future__ import annotations

import itertools

import pytest
from causeway_position import positions, random_causeways

from engines import hexgrid
from engines.causeway import CausewayState
from engines.causeway.board import ARC_STARTS, frontier, ring_mask
from engines.causeway.connected import OUTER_PATHS, joins_all, split_without
from engines.causeway.engine import CausewayEngine
from engines.registry import get_engine

RULES = ["barrier", "spellstone", "quick"]


@pytest.mark.parametrize("rules", RULES)
def test_gc3_a_landing_joins_the_causeway_exactly_when_it_stays_one_group(rules: str) -> None:
    """GC-3: for every giant of random games (and every cell of random shapes, taken
    for a giant's) and every cell it could land on (empty, beside some other occupied
    cell), `joins_all` of `split_without` says whether the Causeway without the giant's
    cell and with the landing cell is one group: splits of one part (two arcs, read by
    one set test) and of more among them."""
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    checked = splits = 0
    parts: dict[int, int] = {}
    shapes = list(random_causeways(40, 9))
    # and a giant with three arms around it (three parts without it: a split of two parts)
    arms = {(k * dq, k * dr): "w" for dq, dr in hexgrid.DIRECTIONS[::2] for k in (1, 2)}
    shapes.append(CausewayState(arms, {(0, 0): (0, "giant")}, (15, 15), ((), ()), {}, {}, 0, "play", 20))
    for state in [*positions(engine, range(3)), *shapes]:
        occupied = set(state.stacks) | set(state.giants)
        # (in random shapes any cell taken for the giant's: the rule reads only the occupancy)
        for origin in sorted(occupied) if state in shapes else state.giants:
            split = split_without(state.stacks | state.giants, origin)
            splits += split is not None
            if split is not None:  # one part (two arcs, joins_all's short way) or more
                parts[len(split)] = parts.get(len(split), 0) + 1
            rest = occupied - {origin}
            for landing in sorted(frontier(state.stacks, state.giants)):
                if not any(n in rest for n in hexgrid.neighbors(landing)):
                    continue
                expected = hexgrid.is_connected(rest | {landing})
                assert joins_all(split, landing, state.stacks | state.giants, origin) == expected, (origin, landing)
                checked += 1
    assert checked and splits and parts.get(1, 0) >= 10 and sum(parts.values()) > parts[1], parts


def plain_groups(cells: set[tuple[int, int]]) -> set[frozenset[tuple[int, int]]]:
    """The edge-connected groups of `cells`, found one flood at a time."""
    left, groups = set(cells), set()
    while left:
        todo = [left.pop()]
        group = set(todo)
        for cell in todo:
            for n in hexgrid.neighbors(cell):
                if n in left:
                    left.remove(n)
                    group.add(n)
                    todo.append(n)
        groups.add(frozenset(group))
    return groups


@pytest.mark.parametrize("rules", RULES)
def test_gc3_the_split_is_the_plain_groups_of_the_causeway_without_the_giant(rules: str) -> None:
    """GC-3: `split_without` (searches from each arc around the giant taking turns,
    stopping when one is left) gives the groups the rest of the Causeway falls into,
    all but one of them (which one is left out is the searches' business), or None when
    it stays one group: for every giant of random games and of random shapes with two
    and three arcs (every occupied cell taken for the giant's), against the groups
    flooded one by one."""
    engine = get_engine("causeway", rules)
    arcs_seen: dict[int, int] = {}
    linked_outside = 0  # arcs linked round a gap's outside (OUTER_PATHS: no search)
    states = [*positions(engine, range(30, 33)), *random_causeways(150, 7)]
    for state in states:
        occupied = set(state.stacks) | set(state.giants)
        for origin in sorted(occupied):  # any cell: the rule reads only the occupancy
            mask = ring_mask(tuple(hexgrid.neighbors(origin)), state.stacks, state.giants)
            arcs = len(ARC_STARTS[mask])
            groups = plain_groups(occupied - {origin})
            split = split_without(state.stacks | state.giants, origin)
            linked_outside += arcs > 1 and any(
                all((origin[0] + dq, origin[1] + dr) in occupied for dq, dr in path) for path in OUTER_PATHS[mask])
            if split is None:
                assert len(groups) <= 1, origin
                continue
            arcs_seen[arcs] = arcs_seen.get(arcs, 0) + 1
            parts = [frozenset(p) for p in split]
            assert len(parts) == len(groups) - 1 and all(p in groups for p in parts), origin
            assert len(set(parts)) == len(parts)
    assert arcs_seen.get(2, 0) >= 20 and arcs_seen.get(3, 0) >= 10 and linked_outside >= 20, (arcs_seen, linked_outside)


def test_gc3_the_outer_paths_go_round_each_gap_between_two_arcs() -> None:
    """GC-3's short way (`split_without`): for every ring mask of two arcs or more, one
    path a gap, each from the cell two steps out beside the last cell of the arc before
    the gap to the one beside the first cell of the arc after it, every cell beside the
    next, and together exactly the cells two steps out that touch the gap's cells."""
    ring = hexgrid.neighbors((0, 0))
    for mask in range(64):
        arcs = ARC_STARTS[mask]
        if len(arcs) < 2:
            assert OUTER_PATHS[mask] == ()
            continue
        assert len(OUTER_PATHS[mask]) == len(arcs)
        for start, path in zip(arcs, OUTER_PATHS[mask], strict=True):
            end = (start - 1) % 6
            gap = []
            while not mask >> end & 1:
                gap.append(ring[end])
                end = (end - 1) % 6
            assert gap and all(hexgrid.distance(c, (0, 0)) == 2 for c in path)
            assert path[0] in hexgrid.neighbors(ring[end]) and path[-1] in hexgrid.neighbors(ring[start])
            assert all(b in hexgrid.neighbors(a) for a, b in itertools.pairwise(path))
            outside = {n for c in gap for n in hexgrid.neighbors(c) if hexgrid.distance(n, (0, 0)) == 2}
            assert set(path) == outside and len(path) == len(set(path)) == 2 * len(gap) + 1
