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
# By ring mask, the empty cells of a ring whose neighbours on it are empty too (GC-S3's
# trap steps: the cell's own ring shares those two with the trapped giant's).
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
    # move that made this state changed the last view's stacks (`view_edits`); "view",
    # the view itself, made once (`views.view_of`), "last" the view of the state this
    # one was played from until this one's is made, "moved" the view's keys the move (a
    # step or a leap) may have changed (`views.MOVED_BY`), and "view_edit" how it was
    # made from that one; "read", the action `parse_action` read off a text of the
    # position's legal list, and that text. Not an argument, never compared.
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
