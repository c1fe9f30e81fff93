"""The Tara board, its notation and the rule primitives on a bare board.

The 45 hills (TA-1) are indexed 0-44 in reading order: row 7 first, then row 6 …
row 1, each from column A to G, skipping the four missing corners. A board is a
`bytes` of 45 cells holding EMPTY, WHITE or BLACK; everything here is a pure
function of such a board, so tests and search bots can call it directly.

Use `parse_picture` / `render_picture` to read and write the readable 7 x 7 cross:

    7   . . . . .
    6 . . . . . . .
    5 . . . W . . .
    4 . . W B W . .
    3 . . . W . . .
    2 . . . . . . .
    1   . . . . .
      A B C D E F G
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress

from engines.base import NotationError

# ----------------------------------------------------------------------------- geometry

SIZE = 7
COLUMNS = "ABCDEFG"
CORNERS = frozenset({(0, 1), (0, 7), (6, 1), (6, 7)})  # TA-1: A1, A7, G1, G7 are missing

# (column 0-6, row 1-7) of each hill, in reading order (row 7 down to row 1).
COORDS: tuple[tuple[int, int], ...] = tuple(
    (col, row)
    for row in range(SIZE, 0, -1)
    for col in range(SIZE)
    if (col, row) not in CORNERS
)
INDEX: dict[tuple[int, int], int] = {coord: i for i, coord in enumerate(COORDS)}
NAMES: tuple[str, ...] = tuple(f"{COLUMNS[col]}{row}" for col, row in COORDS)
BY_NAME: dict[str, int] = {name: i for i, name in enumerate(NAMES)}
HILLS = len(COORDS)

# TA-2: orthogonal adjacency only.
NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(
    tuple(
        INDEX[(col + dc, row + dr)]
        for dc, dr in ((0, 1), (1, 0), (0, -1), (-1, 0))
        if (col + dc, row + dr) in INDEX
    )
    for col, row in COORDS
)
# Every adjacent pair once, lower index first.
PAIRS: tuple[tuple[int, int], ...] = tuple(
    (i, j) for i in range(HILLS) for j in NEIGHBOURS[i] if i < j
)

EMPTY, WHITE, BLACK = 0, 1, 2
SYMBOLS = ".WB"
COLOUR_NAMES = ("", "white", "black")
BRIDGES = 40  # TA-3: each player's supply


# Bit masks over a board read as one integer, a bit per hill: hill i is bit 44 - i of
# `mask(board, colour)` (the board's bytes, in order, read as binary digits, 1 where
# `colour` is). For each index step d between adjacent hills (1 along a row, 6 or 7
# between rows), `_M[d]` holds the bits of the hills whose neighbour d hills on is
# adjacent (the lower hill of a pair of PAIRS); that neighbour is the bit d lower.
# Small ints (45 bits): each operation on them costs a fraction of one on a board read
# a byte per hill (360 bits).
ONLY = tuple(bytes(int(byte == piece) for byte in range(256)) for piece in (EMPTY, WHITE, BLACK))
DIGITS = tuple(bytes(48 + (byte == piece) for byte in range(256)) for piece in (EMPTY, WHITE, BLACK))
_STEPS = sorted({j - i for i, j in PAIRS})
_STEP_MASKS = tuple((d, sum(1 << (HILLS - 1 - i) for i, j in PAIRS if j - i == d)) for d in _STEPS)
(_S1, _M1), (_S6, _M6), (_S7, _M7) = _STEP_MASKS  # the steps are 1, 6 and 7
# The bit of each hill, by the hill's index, and the hill of each bit (by its position).
BIT: tuple[int, ...] = tuple(1 << (HILLS - 1 - i) for i in range(HILLS))
HILL_OF_BIT: tuple[int, ...] = tuple(HILLS - 1 - p for p in range(HILLS))


def mask(board: bytes, colour: int) -> int:
    """The hills holding `colour` (EMPTY: the vacant ones) as bits, hill i at bit 44 - i.

    Read at C speed: the board translated to the digits `0` and `1` and parsed in base 2."""
    return int(board.translate(DIGITS[colour]), 2)


def hills_of(bits: int) -> list[int]:
    """The hills of a mask, lowest index (highest bit) first."""
    hills = []
    while bits:
        top = bits.bit_length() - 1
        hills.append(HILLS - 1 - top)
        bits ^= 1 << top
    return hills


def besieged_bits(own: int, enemy: int) -> int:
    """TA-4 on masks: the `enemy` hills every one of whose neighbours is in `own`.

    A hill fails when, for some step between adjacent hills, its neighbour that step on
    (or back) is not `own`'s; the enemy hills left are besieged."""
    fail = (_M1 & ~(own << _S1)) | ((_M1 & ~own) >> _S1)
    fail |= (_M6 & ~(own << _S6)) | ((_M6 & ~own) >> _S6)
    fail |= (_M7 & ~(own << _S7)) | ((_M7 & ~own) >> _S7)
    return enemy & ~fail


def other(colour: int) -> int:
    return BLACK if colour == WHITE else WHITE


# ----------------------------------------------------------------------------- actions


@dataclass(frozen=True, slots=True)
class Move:
    """One turn: a build on a vacant hill (TA-5) or a capture of a besieged one (TA-4)."""

    hill: int
    capture: bool = False


CAPTURE_NAMES: tuple[str, ...] = tuple("x" + name for name in NAMES)
_MOVES = {**{name: Move(i) for i, name in enumerate(NAMES)},
          **{"X" + name: Move(i, True) for i, name in enumerate(NAMES)}}
# The moves as `format_move` writes them (`D4`, `xD4`): one move object per form.
MOVES = {**{name: _MOVES[name] for name in NAMES}, **{"x" + name: _MOVES["X" + name] for name in NAMES}}


def format_move(move: Move) -> str:
    """TA-11: `D4` for a build, `xD4` for a capture."""
    return CAPTURE_NAMES[move.hill] if move.capture else NAMES[move.hill]


def parse_move(text: str) -> Move:
    """Read `D4` or `xD4` (any case, surrounding spaces allowed); NotationError otherwise."""
    raw = text.strip().upper()
    move = _MOVES.get(raw)
    if move is not None:  # the common form, `D4` or `XD4`: one move object per form
        return move
    capture = raw.startswith("X")
    name = raw[1:].strip() if capture else raw
    hill = BY_NAME.get(name)
    if hill is None:
        raise NotationError(
            f"{text!r}: expected a hill such as D4 (build) or xD4 (capture); "
            "columns A-G, rows 1-7, no corners A1 A7 G1 G7"
        )
    return Move(hill, capture)


# ----------------------------------------------------------------------------- rules


def besieged(board: bytes, colour: int) -> list[int]:
    """TA-4: enemy hills every one of whose neighbours holds a ringfort of `colour`.

    Such a ringfort is necessarily isolated (it has no friendly neighbour). Found a
    board at a time on masks (`besieged_bits`), lowest hill first.
    """
    enemy = int(board.translate(DIGITS[BLACK if colour == WHITE else WHITE]), 2)
    if not enemy:
        return []
    found = besieged_bits(int(board.translate(DIGITS[colour]), 2), enemy)
    if not found:
        return []
    return hills_of(found)


def moves_for(board: bytes, colour: int) -> list[Move]:
    """Every legal turn for `colour`: the captures if any (TA-4), else every build (TA-5).

    An empty list means the player must call OUT (TA-7).
    """
    captures = besieged(board, colour)
    if captures:
        return [Move(i, True) for i in captures]
    return [Move(i) for i, piece in enumerate(board) if piece == EMPTY]


def notation_for(board: bytes, colour: int) -> list[str]:
    """`moves_for` written in notation (TA-11), in its order, without building moves:
    the names of the besieged hills (TA-4), else of the vacant ones (TA-5), picked at
    C speed."""
    captures = besieged(board, colour)
    if captures:
        return [CAPTURE_NAMES[i] for i in captures]
    return vacant_names(board)


def vacant_names(board: bytes) -> list[str]:
    """The names of the vacant hills in index order (TA-5's builds, in notation)."""
    return list(compress(NAMES, board.translate(ONLY[EMPTY])))


def has_move(board: bytes, colour: int) -> bool:
    return EMPTY in board or bool(besieged(board, colour))


def links(board: bytes, colour: int) -> int:
    """Adjacent pairs of `colour`'s ringforts: the bridges the rules ask for (TA-6).

    Counted a whole board at a time: for each step between adjacent hills, the bits
    set both at a hill and at its neighbour that step on.
    """
    return links_bits(int(board.translate(DIGITS[colour]), 2))


def links_bits(m: int) -> int:
    """`links` of a mask (`mask(board, colour)`)."""
    return ((m & (m << _S1) & _M1).bit_count() + (m & (m << _S6) & _M6).bit_count()
            + (m & (m << _S7) & _M7).bit_count())


def bridges_used(board: bytes, colour: int) -> int:
    """TA-6/TA-8: bridges used, saturating at the 40 in the supply.

    A player's links never decrease (a captured ringfort is isolated, so losing it
    unlinks nothing), so capping the current count equals adding each move's bridges
    with saturation.
    """
    return min(BRIDGES, links(board, colour))


def territory(board: bytes, colour: int) -> int:
    """TA-8: hills holding `colour`'s ringforts."""
    return board.count(colour)


def place(board: bytes, hill: int, colour: int) -> tuple[bytes, int]:
    """Put a ringfort of `colour` on `hill` (a build, or a capture's replacement).

    Returns the new board and the bridges this move used (after saturation, TA-6).
    """
    needed = 0
    for j in NEIGHBOURS[hill]:
        if board[j] == colour:
            needed += 1
    # n ringforts have at most 2n links, so far from the cap no count is needed.
    if 2 * board.count(colour) + needed > BRIDGES:
        needed = min(needed, BRIDGES - bridges_used(board, colour))
    return board[:hill] + bytes((colour,)) + board[hill + 1:], needed


# The sieges on a board: `sieges[colour]` is `besieged(board, colour)` for WHITE and
# BLACK (index 0 unused), lists never changed once made.
Sieges = tuple[list[int], list[int], list[int]]
NO_SIEGES: Sieges = ([], [], [])  # an empty board's
_BYTE = tuple(bytes((piece,)) for piece in (EMPTY, WHITE, BLACK))


def sieges_of(board: bytes) -> Sieges:
    """Both colours' `besieged` lists of `board` (index 0 unused)."""
    return (NO_SIEGES[0], besieged(board, WHITE), besieged(board, BLACK))


def play(board: bytes, hill: int, colour: int, sieges: Sieges, left: int) -> tuple[bytes, int, Sieges]:
    """`place(board, hill, colour)` and the new board's sieges, from `board`'s (`sieges`),
    for a `hill` not already `colour`'s (a build or a capture); `left` is what `colour`
    has left of its supply, `BRIDGES - bridges_used(board, colour)` (TA-6).

    Only `hill` changed, and whether a hill is besieged (TA-4) depends on its own piece
    and its neighbours' (TA-2): so only `hill` and its neighbours can change siege.
    `colour` now besieges: what it did but `hill` (no longer an enemy ringfort), and
    any enemy neighbour whose neighbours are now all `colour`'s. The other colour
    besieges: what it did but `hill`'s neighbours (each has a `colour` neighbour now),
    and `hill` itself when all its neighbours are that colour's.
    """
    enemy = BLACK if colour == WHITE else WHITE
    new = board[:hill] + _BYTE[colour] + board[hill + 1:]
    needed = 0
    surrounded = True  # every neighbour of `hill` is the enemy's
    gained = None
    for j in NEIGHBOURS[hill]:
        piece = new[j]
        if piece == colour:
            needed += 1
            surrounded = False
        elif piece == enemy:
            for k in NEIGHBOURS[j]:
                if new[k] != colour:
                    break
            else:
                gained = [j] if gained is None else [*gained, j]
        else:
            surrounded = False
    if needed > left:  # TA-6: the count saturates at the supply
        needed = left
    mine, theirs = sieges[colour], sieges[enemy]
    if gained is not None:
        mine = sorted([i for i in mine if i != hill] + gained)
    elif mine and hill in mine:
        mine = [i for i in mine if i != hill]
    if theirs:
        near = NEIGHBOURS[hill]
        theirs = [i for i in theirs if i not in near]
        if surrounded:
            theirs = sorted([*theirs, hill])
    elif surrounded:
        theirs = [hill]
    if mine is sieges[colour] and theirs is sieges[enemy]:  # (most moves) nothing changed
        return new, needed, sieges
    return new, needed, ((NO_SIEGES[0], mine, theirs) if colour == WHITE else (NO_SIEGES[0], theirs, mine))


# ----------------------------------------------------------------------------- pictures


def parse_picture(text: str) -> bytes:
    """Read the 7 x 7 cross (see the module docstring) into a board.

    Rows run 7 (top) to 1; a leading row number and the `A B C … G` footer line are
    optional. Rows 7 and 1 have 5 entries (or 7 with `-` at the missing corners).
    Entries are `.`, `W` or `B` (any case). Raises ValueError on anything else.
    """
    rows: list[list[str]] = []
    for line in text.splitlines():
        tokens = line.split()
        if not tokens or "".join(tokens).upper() == COLUMNS:
            continue
        if tokens[0].isdigit():
            tokens = tokens[1:]
        rows.append([t.upper() for t in tokens])
    if len(rows) != SIZE:
        raise ValueError(f"a picture has {SIZE} rows, got {len(rows)}")
    board = bytearray(HILLS)
    for r, tokens in enumerate(rows):
        row = SIZE - r
        if row in (1, SIZE) and len(tokens) == SIZE:
            if tokens[0] != "-" or tokens[-1] != "-":
                raise ValueError(f"row {row}: the corners are missing hills, write '-'")
            tokens = tokens[1:-1]
        cols = range(1, SIZE - 1) if row in (1, SIZE) else range(SIZE)
        if len(tokens) != len(cols):
            raise ValueError(f"row {row}: expected {len(cols)} hills, got {len(tokens)}")
        for col, token in zip(cols, tokens, strict=True):
            if token not in SYMBOLS:
                raise ValueError(f"row {row}: {token!r} is not one of . W B")
            board[INDEX[(col, row)]] = SYMBOLS.index(token)
    return bytes(board)


def render_picture(board: bytes) -> str:
    """Draw a board as the 7 x 7 cross that `parse_picture` reads back."""
    lines = []
    for row in range(SIZE, 0, -1):
        cells = [
            " " if (col, row) in CORNERS else SYMBOLS[board[INDEX[(col, row)]]]
            for col in range(SIZE)
        ]
        lines.append(f"{row} {' '.join(cells)}".rstrip())
    lines.append("  " + " ".join(COLUMNS))
    return "\n".join(lines)
