"""Giant's Causeway: does the Causeway stay one piece (GC-3)?

A leap may not split the Causeway: the stones and giants left once the leaping giant
has gone, plus the cell it lands on, must stay linked. `split_without` works out how
the pieces around the giant's cell fall apart without it (None: they stay one group,
the common case found from its ring alone); `joins_all` says whether a landing cell
links them again. `engines.causeway.leaps` and `legal_text` call them for every leap
they check or list; the tables here are read by ring mask (`board.ring_mask`).
"""

from __future__ import annotations

from collections.abc import Container

from engines.causeway.board import ARC_STARTS, DIRECTIONS, Hex, around, known_ring


# By ring mask, for each gap of empty cells between two arcs (`ARC_STARTS`): the cells
# two steps from the centre that go round the gap's outside, as offsets from it, from
# the one beside the last cell of the arc before the gap to the one beside the first
# cell of the arc after it (each beside the next). All of them occupied, the two arcs
# stay linked without the centre (`split_without`). Empty for masks of one arc or none.
def _outer_paths(mask: int) -> tuple[tuple[Hex, ...], ...]:
    arcs = ARC_STARTS[mask]
    if len(arcs) < 2:
        return ()
    paths = []
    for start in arcs:  # the gap before this arc: back from it to the previous arc's end
        k = start
        j = (k - 1) % 6
        while not mask >> j & 1:
            j = (j - 1) % 6
        path = []
        i = j
        while True:  # O + d_i + d_(i+1), then O + 2 d_(i+1), ... up to O + d_(k-1) + d_k
            (a, b), (c, d) = DIRECTIONS[i], DIRECTIONS[(i + 1) % 6]
            path.append((a + c, b + d))
            i = (i + 1) % 6
            if i == k:
                break
            path.append((2 * c, 2 * d))
        paths.append(tuple(path))
    return tuple(paths)


OUTER_PATHS: tuple[tuple[tuple[Hex, ...], ...], ...] = tuple(_outer_paths(m) for m in range(64))


def occupied_neighbours(
    cell: Hex, stacks: dict[Hex, str], giants: dict[Hex, tuple[int, str]]
) -> list[Hex]:
    return [n for n in known_ring(cell) or around(cell) if n in stacks or n in giants]


def split_without(occupied: Container[Hex], origin: Hex, mask: int = -1) -> list[set[Hex]] | None:
    """GC-3 for leaps from `origin`: how the Causeway falls apart once the giant leaves.

    None when it stays one group (the common case); otherwise its parts but one, each
    the set of its cells (every other occupied cell but `origin` is in the last part).
    A leap lands next to the run it passed over, so only the emptied origin can split
    the group, and the landing cell may join the parts again: `joins_all` decides. When
    the origin's occupied neighbours form one unbroken arc around it they stay linked
    and nothing can split; nor when the cells two steps out round every gap between
    arcs but one are occupied (`OUTER_PATHS`: looked at first). Else searches from each
    arc take turns: they meet when the arcs are linked, and the first to run out has
    found a smaller part, so none walks the whole Causeway. `mask` is the origin's
    `ring_mask` if the caller has it (else worked out here). `occupied` holds the
    Causeway's cells, stacks and giants (`stacks | giants`: one lookup a cell, not two).
    """
    ring = known_ring(origin) or around(origin)
    if mask < 0:
        a, b, c, d, e, f = ring  # `ring_mask`, written out
        mask = ((a in occupied) | (b in occupied) << 1 | (c in occupied) << 2 | (d in occupied) << 3
                | (e in occupied) << 4 | (f in occupied) << 5)
    arcs = ARC_STARTS[mask]
    if len(arcs) <= 1:
        return None
    # The arcs linked round a gap's outside (OUTER_PATHS, two steps from the origin: no
    # search needed), the commonest way a Causeway stays one group: each such gap joins
    # the two arcs beside it, and all but one of the gaps so joined join every arc.
    q, r = origin
    linked = 1 - len(arcs)
    for path in OUTER_PATHS[mask]:
        for dq, dr in path:
            if (q + dq, r + dr) not in occupied:
                break
        else:
            linked += 1
            if not linked:
                return None
    starts = [ring[i] for i in arcs]
    if len(starts) == 2:
        return _split_two(occupied, origin, starts[0], starts[1])
    return _split_many(occupied, origin, starts)


def _split_two(occupied: Container[Hex], origin: Hex, a: Hex, b: Hex) -> list[set[Hex]] | None:
    """`split_without` for two arcs starting on `a` and `b`."""
    get = known_ring
    seen_a, seen_b = {origin, a}, {origin, b}
    todo_a, todo_b = [a], [b]
    i = 0
    while True:
        if i == len(todo_a):  # a's side is closed: the Causeway parts there
            seen_a.discard(origin)
            return [seen_a]
        if i == len(todo_b):
            seen_b.discard(origin)
            return [seen_b]
        for n in get(todo_a[i]) or around(todo_a[i]):
            if n in seen_a or n not in occupied:
                continue
            if n in seen_b:
                return None
            seen_a.add(n)
            todo_a.append(n)
        for n in get(todo_b[i]) or around(todo_b[i]):
            if n in seen_b or n not in occupied:
                continue
            if n in seen_a:
                return None
            seen_b.add(n)
            todo_b.append(n)
        i += 1


def _split_many(occupied: Container[Hex], origin: Hex, starts: list[Hex]) -> list[set[Hex]] | None:
    """`split_without` for three arcs (or more) starting on `starts`: searches from each
    take turns, one cell each. Two that meet are linked and go on as one; one that runs
    out has found a whole part. The search stops once one is left, so it never walks
    the largest part (often a lone giant or stack parts from the rest)."""
    get = known_ring
    side: dict[Hex, int] = {origin: -1}  # every cell seen -> the search that saw it first
    queues: list[list[Hex]] = []
    for j, start in enumerate(starts):
        side[start] = j
        queues.append([start])
    count = len(starts)
    group = list(range(count))  # what each search goes on as, once it met others
    at = [0] * count
    live = list(group)
    closed: list[int] = []
    while True:
        for g in live:
            if group[g] != g:
                continue  # went on as another this round
            queue = queues[g]
            k = at[g]
            if k == len(queue):
                closed.append(g)
                continue
            at[g] = k + 1
            for n in get(queue[k]) or around(queue[k]):
                seen = side.get(n)
                if seen is None:
                    if n in occupied:
                        side[n] = g
                        queue.append(n)
                elif seen >= 0 and (h := group[seen]) != g:  # linked: h goes on as g
                    queue.extend(queues[h][at[h]:])
                    for x in range(count):
                        if group[x] == h:
                            group[x] = g
        live = [g for g in live if group[g] == g and g not in closed]
        if len(live) <= 1:
            break
    if not live:  # the last ones ran out together: one of them is the part left out
        closed.pop()
    if not closed:
        return None
    parts: list[set[Hex]] = [set() for _ in closed]
    number = {g: i for i, g in enumerate(closed)}
    for cell, j in side.items():
        if j >= 0:
            i = number.get(group[j])
            if i is not None:
                parts[i].add(cell)
    return parts


def joins_all(split: list[set[Hex]] | None, landing: Hex, occupied: Container[Hex], origin: Hex) -> bool:
    """Does a giant leaving `origin` for `landing` leave one Causeway (see
    `split_without`): does `landing` touch every part (and, a part being all but one
    group, the group left out)?"""
    if split is None:
        return True
    ring = known_ring(landing) or around(landing)
    if len(split) == 1:  # two arcs, the usual split: one part, and the rest
        part = split[0]
        if part.isdisjoint(ring):  # (a part holds occupied cells, never the origin)
            return False
        for n in ring:  # and the rest (a loop: `any` over a generator costs twice as much)
            if n not in part and n != origin and n in occupied:
                break
        else:
            return False
        return True
    touched: set[int] = set()
    last = False  # the part `split` leaves out
    for n in ring:
        if n == origin or n not in occupied:
            continue
        for i, part in enumerate(split):
            if n in part:
                touched.add(i)
                break
        else:
            last = True
    return last and len(touched) == len(split)
