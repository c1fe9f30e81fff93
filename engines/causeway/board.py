"""Giant's Causeway: the position, its stones and the geometry helpers the rules share.

The board is the unbounded hex plane of GC-1 (axial `q,r`, geometry from
`engines.hexgrid`). A position keeps two sparse maps:

- `stacks`: cell -> the stones on it, bottom to top, one character per stone:
  `w` / `b` a white / black blank, `W` / `B` a white / black special stone (a barrier
  in the `barrier` rule set, a spellstone in `spellstone`). Heights are 1-3 (GC-2).
- `giants`: cell -> (colour, kind), kind "giant" (barrier) or "trapper" / "spikey"
  (spellstone, quick).

Colours are 0 = White (seat 0, moves first, GC-4) and 1 = Black (seat 1).
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

from engines import hexgrid

Hex = hexgrid.Hex

WHITE, BLACK = 0, 1
COLOUR_NAMES = ("white", "black")
BLANK = ("w", "b")  # a colour's blank stone
SPECIAL = ("W", "B")  # a colour's barrier / spellstone
STONE_COLOUR = {"w": WHITE, "W": WHITE, "b": BLACK, "B": BLACK}

GIANT, TRAPPER, SPIKEY, BLANK_PIECE = "giant", "trapper", "spikey", "blank"

# GC-1 direction names, in hexgrid.DIRECTIONS order, as the pieces sit on a pointy-top
# drawing where r grows downwards: (+1,0) is east, (+1,-1) north-east, and so on.
DIRECTION_NAMES = ("e", "ne", "nw", "w", "sw", "se")
DIRECTION_INDEX = {name: i for i, name in enumerate(DIRECTION_NAMES)}
DIRECTIONS = hexgrid.DIRECTIONS

PHASE_SETUP, PHASE_PLAY, PHASE_DESTROY, PHASE_OVER = "setup", "play", "destroy", "over"

_CELL_RE = re.compile(r"^\s*([+-]?[0-9]{1,6})\s*,\s*([+-]?[0-9]{1,6})\s*$")


def cell_name(cell: Hex) -> str:
    """The `q,r` text of a cell: the key of every per-cell map in views and notation."""
    return f"{cell[0]},{cell[1]}"


def parse_cell(text: str) -> Hex | None:
    """Read `q,r`; None if it is not a cell (the caller raises the right error)."""
    match = _CELL_RE.match(text)
    if match is None:
        return None
    return (int(match.group(1)), int(match.group(2)))


# Cell names by cell, made once (`cell_name`'s text) for legal lists and views. Only
# cells of real positions come here (the board, its frontier and its leap runs), but a
# long-lived server plays many games: emptied when full rather than grown without bound.
_NAMES: dict[Hex, str] = {}
_NAMES_MAX = 8192


# ... and the other way round: the cell each of those names is (`known_cell`).
_CELLS: dict[str, Hex] = {}


def name(cell: Hex) -> str:
    """`cell_name(cell)`, kept for the next list or view (the same str object)."""
    text = _NAMES.get(cell)
    if text is None:
        if len(_NAMES) >= _NAMES_MAX:
            _NAMES.clear()
            _CELLS.clear()
        text = _NAMES[cell] = f"{cell[0]},{cell[1]}"
        _CELLS[text] = cell
    return text


# `known_name(cell) or name(cell)` is `name(cell)` with one C call where the name is
# made already (nearly always): per-stone loops use it (a Python call costs ~1,000
# instructions in this interpreter). The table is emptied in place, never replaced.
known_name = _NAMES.get
# `parse_cell(text)` for a text `name` made (a move's text names cells its position's
# legal list named): one C call, None for any other text (then `parse_cell` reads it).
known_cell = _CELLS.get


def names(cells: list[Hex]) -> list[str]:
    """`name` of every cell, in order."""
    get = _NAMES.get
    return [get(c) or name(c) for c in cells]


neighbours = hexgrid.neighbors

# Each cell's six neighbours in direction order, made once (the geometry helpers below
# and the rule sets' step rules ask for them many times a move); bounded like _NAMES.
_AROUND: dict[Hex, tuple[Hex, ...]] = {}


def around(cell: Hex) -> tuple[Hex, ...]:
    """`neighbours(cell)` as a tuple kept for the next call (read, never changed)."""
    ring = _AROUND.get(cell)
    if ring is None:
        if len(_AROUND) >= _NAMES_MAX:
            _AROUND.clear()
        q, r = cell
        ring = _AROUND[cell] = tuple((q + dq, r + dr) for dq, dr in DIRECTIONS)
    return ring


# `around` with one C call where the ring is made already (see `known_name`).
known_ring = _AROUND.get


def ring_mask(ring: tuple[Hex, ...], stacks: dict[Hex, str], giants: dict[Hex, tuple[int, str]]) -> int:
    """Which cells of a ring are occupied, bit i for the i-th (the tables below read it).
    Hot callers write this out: one expression, no comprehension (a call of its own)."""
    a, b, c, d, e, f = ring
    return ((a in stacks or a in giants) | (b in stacks or b in giants) << 1 | (c in stacks or c in giants) << 2
            | (d in stacks or d in giants) << 3 | (e in stacks or e in giants) << 4 | (f in stacks or f in giants) << 5)


# By ring mask: where each arc of occupied cells starts going round (`split_without`),
# and the empty cells a giant may slide to (GC-S2: not when both cells beside the gate,
# the ring's i - 1 and i + 1, are occupied). Directions run round the hexagon in order.
ARC_STARTS: tuple[tuple[int, ...], ...] = tuple(
    tuple(i for i in range(6) if m >> i & 1 and not m >> (i - 1) % 6 & 1) for m in range(64)
)
SLIDES: tuple[tuple[int, ...], ...] = tuple(
    tuple(i for i in range(6) if not m >> i & 1 and not (m >> (i - 1) % 6 & 1 and m >> (i + 1) % 6 & 1))
    for m in range(64)
)
# The occupied directions of a ring mask, in order (a leap's run starts on one).
MASK_BITS: tuple[tuple[int, ...], ...] = tuple(tuple(i for i in range(6) if m >> i & 1) for m in range(64))
# The ring's indices in the order of its cells sorted ((q, r) order: the same around any
# cell), and the slide rule's gates in that order (step lists are sorted by cell).
RING_ORDER: tuple[int, ...] = tuple(sorted(range(6), key=DIRECTIONS.__getitem__))
SLIDES_SORTED: tuple[tuple[int, ...], ...] = tuple(tuple(i for i in RING_ORDER if i in gates) for gates in SLIDES)
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
# ... and the empty cells of a ring whose neighbours on it are empty too (GC-S3's trap
# steps: the cell's own ring shares those two with the trapped giant's).
TRAP_GATES: tuple[tuple[int, ...], ...] = tuple(
    tuple(i for i in range(6) if not (m >> i & 1 or m >> (i - 1) % 6 & 1 or m >> (i + 1) % 6 & 1))
    for m in range(64)
)


# ----------------------------------------------------------------------------- state


# Not frozen: a frozen dataclass sets each field through `object.__setattr__`, which made
# building the state a move makes cost ~20,000 instructions instead of ~4,500
# (docs/performance.md, session 13). Nothing assigns to a state's fields once it is made.
@dataclass(slots=True)
class CausewayState:
    """One position of any rule set. Callers treat it (and its maps) as immutable.

    `history` holds short digests of the earlier positions (cells + supplies + side to
    move, GC-B11 / GC-S7) since stones were last added to the board, oldest first: adding
    a stone can never be undone, so older positions cannot recur. The current position's
    digest is worked out only when asked for (`views.digest`: a move that adds a stone,
    most of them, never needs it; snapshots and a move that adds none do). `ply` counts
    every applied action, setup placements included; `passes` counts passes in a row.
    """

    stacks: dict[Hex, str]
    giants: dict[Hex, tuple[int, str]]
    supply: tuple[int, int]
    setup_left: tuple[tuple[str, ...], tuple[str, ...]]
    won: dict[Hex, int]  # counting towers (won in barrier, scored in spellstone / quick)
    destroyed: dict[Hex, int]  # GC-B10: won towers that stopped counting
    to_move: int
    phase: str
    ply: int = 0
    passes: int = 0
    history: tuple[str, ...] = ()
    end: str | None = None
    # The view's parts worked out for this position's maps, by map name ("stacks",
    # "giants", "won", "destroyed" -> (that map, its parts...), `views.view_of`): kept
    # with the state, so they live and die with it, and handed to the next state for
    # each map a move passes on unchanged (`turn_end.pass_on`); and "frontier"
    # (`frontier_of`), carried to the next state (`carry_frontier`); "edit", how the
    # move that made this state changed the last view's stacks (`view_edits`). Not an
    # argument, never compared.
    memo: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    def occupied(self, cell: Hex) -> bool:
        return cell in self.stacks or cell in self.giants


@dataclass(slots=True)
class Work:
    """A mutable copy of the parts of a state that one move changes."""

    stacks: dict[Hex, str]
    giants: dict[Hex, tuple[int, str]]
    supply: list[int]
    won: dict[Hex, int]
    destroyed: dict[Hex, int]
    events: list[dict[str, object]] = field(default_factory=list)
    end: str | None = None

    @classmethod
    def of(cls, state: CausewayState) -> Work:
        return cls(
            dict(state.stacks),
            dict(state.giants),
            list(state.supply),
            dict(state.won),
            dict(state.destroyed),
        )

    def specials(self, colour: int) -> list[Hex]:
        """Cells topped by `colour`'s barrier / spellstone, sorted."""
        mark = SPECIAL[colour]
        return sorted(c for c, s in self.stacks.items() if s[-1] == mark)


# ----------------------------------------------------------------------------- geometry


def frontier(stacks: dict[Hex, str], giants: dict[Hex, tuple[int, str]]) -> set[Hex]:
    """Empty cells adjacent to at least one occupied cell (where a barrier step may go)."""
    occupied = stacks.keys() | giants.keys()
    get = _AROUND.get
    out: set[Hex] = set()
    for cell in occupied:
        out.update(get(cell) or around(cell))
    out -= occupied
    return out


def frontier_of(state: CausewayState) -> tuple[list[Hex], list[str]]:
    """`frontier` sorted, and its cells' names: kept in the state's memo, where the next
    state finds it and changes only the cells around those a move filled or emptied
    (`carry_frontier`) instead of walking the whole Causeway. Read, never changed."""
    entry: tuple[list[Hex], list[str]] | None = state.memo.get("frontier")
    if entry is None:
        cells = sorted(frontier(state.stacks, state.giants))
        entry = state.memo["frontier"] = (cells, names(cells))
    return entry


def carry_frontier(before: CausewayState, after: CausewayState, filled: tuple[Hex, ...], emptied: tuple[Hex, ...]) -> None:
    """Give `after` the frontier `before` kept, if it kept one: `filled` and `emptied`
    are the cells whose occupancy the move changed (all of them).

    Each cell's place in the sorted lists is found by halving, but a filled cell's ring
    needs two searches, not six: (q, r - 1) and (q, r + 1) sit right beside (q, r) in
    any sorted list of cells, (q - 1, r + 1) right after (q - 1, r) and (q + 1, r) right
    after (q + 1, r - 1) (tuple comparisons are most of the cost here)."""
    entry = before.memo.get("frontier")
    if entry is None:
        return
    stacks, giants = after.stacks, after.giants
    get = _AROUND.get
    cells, texts = entry
    cells, texts = list(cells), list(texts)
    for cell in filled:  # it leaves the frontier, the empty cells around it join it
        i = bisect_left(cells, cell)
        if i < len(cells) and cells[i] == cell:
            del cells[i]
            del texts[i]
        # Around (q, r), in direction order: (q+1, r), (q+1, r-1), (q, r-1), (q-1, r),
        # (q-1, r+1), (q, r+1). Those after it first, so `i` stays its place.
        a0, a1, a2, a3, a4, a5 = get(cell) or around(cell)
        e0 = a0 not in stacks and a0 not in giants
        e1 = a1 not in stacks and a1 not in giants
        if e0 or e1:
            j = bisect_left(cells, a1, i)
            if j < len(cells) and cells[j] == a1:  # (filled itself, it may not be gone yet)
                j += 1
            elif e1:
                cells.insert(j, a1)
                texts.insert(j, _NAMES.get(a1) or name(a1))
                j += 1
            if e0 and (j == len(cells) or cells[j] != a0):
                cells.insert(j, a0)
                texts.insert(j, _NAMES.get(a0) or name(a0))
        if a5 not in stacks and a5 not in giants and (i == len(cells) or cells[i] != a5):
            cells.insert(i, a5)
            texts.insert(i, _NAMES.get(a5) or name(a5))
        if a2 not in stacks and a2 not in giants and (i == 0 or cells[i - 1] != a2):
            cells.insert(i, a2)
            texts.insert(i, _NAMES.get(a2) or name(a2))
        e3 = a3 not in stacks and a3 not in giants
        e4 = a4 not in stacks and a4 not in giants
        if e3 or e4:
            j = bisect_left(cells, a3, 0, i)
            if j < len(cells) and cells[j] == a3:
                j += 1
            elif e3:
                cells.insert(j, a3)
                texts.insert(j, _NAMES.get(a3) or name(a3))
                j += 1
            if e4 and (j == len(cells) or cells[j] != a4):
                cells.insert(j, a4)
                texts.insert(j, _NAMES.get(a4) or name(a4))
    for cell in emptied:  # it and the empty cells around it: in if they touch an occupied one
        for x in (cell, *(get(cell) or around(cell))):
            if x in stacks or x in giants:
                continue
            for n in get(x) or around(x):
                if n in stacks or n in giants:
                    inside = True
                    break
            else:
                inside = False
            i = bisect_left(cells, x)
            if inside != (i < len(cells) and cells[i] == x):
                if inside:
                    cells.insert(i, x)
                    texts.insert(i, _NAMES.get(x) or name(x))
                else:
                    del cells[i]
                    del texts[i]
    after.memo["frontier"] = (cells, texts)


def occupied_neighbours(
    cell: Hex, stacks: dict[Hex, str], giants: dict[Hex, tuple[int, str]]
) -> list[Hex]:
    return [n for n in _AROUND.get(cell) or around(cell) if n in stacks or n in giants]


def split_without(
    stacks: dict[Hex, str], giants: dict[Hex, tuple[int, str]], origin: Hex, mask: int = -1
) -> list[set[Hex]] | None:
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
    `ring_mask` if the caller has it (else worked out here).
    """
    ring = _AROUND.get(origin) or around(origin)
    if mask < 0:
        a, b, c, d, e, f = ring  # `ring_mask`, written out
        mask = ((a in stacks or a in giants) | (b in stacks or b in giants) << 1
                | (c in stacks or c in giants) << 2 | (d in stacks or d in giants) << 3
                | (e in stacks or e in giants) << 4 | (f in stacks or f in giants) << 5)
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
            x = (q + dq, r + dr)
            if x not in stacks and x not in giants:
                break
        else:
            linked += 1
            if not linked:
                return None
    starts = [ring[i] for i in arcs]
    if len(starts) == 2:
        return _split_two(stacks, giants, origin, starts[0], starts[1])
    return _split_many(stacks, giants, origin, starts)


def _split_two(
    stacks: dict[Hex, str], giants: dict[Hex, tuple[int, str]], origin: Hex, a: Hex, b: Hex
) -> list[set[Hex]] | None:
    """`split_without` for two arcs starting on `a` and `b`."""
    get = _AROUND.get
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
            if n in seen_a or not (n in stacks or n in giants):
                continue
            if n in seen_b:
                return None
            seen_a.add(n)
            todo_a.append(n)
        for n in get(todo_b[i]) or around(todo_b[i]):
            if n in seen_b or not (n in stacks or n in giants):
                continue
            if n in seen_a:
                return None
            seen_b.add(n)
            todo_b.append(n)
        i += 1


def _split_many(
    stacks: dict[Hex, str], giants: dict[Hex, tuple[int, str]], origin: Hex, starts: list[Hex]
) -> list[set[Hex]] | None:
    """`split_without` for three arcs (or more) starting on `starts`: searches from each
    take turns, one cell each. Two that meet are linked and go on as one; one that runs
    out has found a whole part. The search stops once one is left, so it never walks
    the largest part (often a lone giant or stack parts from the rest)."""
    get = _AROUND.get
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
                    if n in stacks or n in giants:
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


def joins_all(
    split: list[set[Hex]] | None,
    landing: Hex,
    stacks: dict[Hex, str],
    giants: dict[Hex, tuple[int, str]],
    origin: Hex,
) -> bool:
    """Does a giant leaving `origin` for `landing` leave one Causeway (see
    `split_without`): does `landing` touch every part (and, a part being all but one
    group, the group left out)?"""
    if split is None:
        return True
    ring = _AROUND.get(landing) or around(landing)
    if len(split) == 1:  # two arcs, the usual split: one part, and the rest
        part = split[0]
        if part.isdisjoint(ring):  # (a part holds occupied cells, never the origin)
            return False
        for n in ring:  # and the rest (a loop: `any` over a generator costs twice as much)
            if n not in part and n != origin and (n in stacks or n in giants):
                break
        else:
            return False
        return True
    touched: set[int] = set()
    last = False  # the part `split` leaves out
    for n in ring:
        if n == origin or not (n in stacks or n in giants):
            continue
        for i, part in enumerate(split):
            if n in part:
                touched.add(i)
                break
        else:
            last = True
    return last and len(touched) == len(split)


def specials_out(state: CausewayState, colour: int) -> int:
    """How many stacks `colour`'s barrier / spellstone tops (from the view's count, kept
    in the state's memo, when there is one)."""
    entry = state.memo.get("stacks")
    if entry is not None and entry[0] is state.stacks:
        count: int = entry[2][COLOUR_NAMES[colour]]
        return count
    mark = SPECIAL[colour]
    return sum(1 for s in state.stacks.values() if s[-1] == mark)


def stone_count(stacks: dict[Hex, str]) -> int:
    return sum(map(len, stacks.values()))


def position_key(
    stacks: dict[Hex, str],
    giants: dict[Hex, tuple[int, str]],
    supply: tuple[int, int] | list[int],
    to_move: int,
) -> str:
    """A 16-hex-digit digest of cells + supplies + side to move (the repetition key)."""
    get = _NAMES.get
    parts = [(get(c) or name(c)) + s for c, s in sorted(stacks.items())]  # "q,r" and the stones
    parts.extend(f"{get(c) or name(c)}{g[0]}{g[1][0]}" for c, g in sorted(giants.items()))
    parts.append(f"{supply[0]}/{supply[1]}/{to_move}")
    return hashlib.blake2b(";".join(parts).encode(), digest_size=8).hexdigest()


# A giant's part of the repetition key ("q,r", colour, kind's initial) by (cell, giant),
# made once; bounded like _NAMES.
_GIANT_KEYS: dict[tuple[Hex, tuple[int, str]], str] = {}


def _giant_key(item: tuple[Hex, tuple[int, str]]) -> str:
    if len(_GIANT_KEYS) >= _NAMES_MAX:
        _GIANT_KEYS.clear()
    cell, (colour, kind) = item
    text = _GIANT_KEYS[item] = f"{name(cell)}{colour}{kind[0]}"
    return text


def key_of(
    stacks_view: dict[str, str],
    giants: dict[Hex, tuple[int, str]],
    supply: tuple[int, int] | list[int],
    to_move: int,
    stacks_text: str | None = None,
) -> str:
    """`position_key` from the stacks' view (`views.stacks_part`: "q,r" -> stones in
    cell order), which a move works out anyway: the same text hashed, without sorting
    and naming the stacks again. `stacks_text` is `stacks_key_text(stacks_view)` if
    the caller kept it (moves that add no stone leave the view as it was)."""
    get = _GIANT_KEYS.get
    parts = [get(item) or _giant_key(item) for item in sorted(giants.items())]
    parts.append(f"{supply[0]}/{supply[1]}/{to_move}")
    if stacks_text is None:
        stacks_text = stacks_key_text(stacks_view)
    if stacks_text:  # (no stacks: no text, and no separator after it)
        parts.insert(0, stacks_text)
    return hashlib.blake2b(";".join(parts).encode(), digest_size=8).hexdigest()


def stacks_key_text(stacks_view: dict[str, str]) -> str:
    """The stacks' part of `key_of`'s text: "q,r" and the stones, a stack after another."""
    return ";".join([cell + stones for cell, stones in stacks_view.items()])  # (a comprehension: faster than map here)
