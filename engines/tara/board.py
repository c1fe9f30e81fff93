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


# Bit masks over a board read as one integer, a byte per hill (hill i is bits 8i..8i+7
# of `int.from_bytes(board.translate(ONLY[colour]), "little")`, 1 where `colour` is):
# for each index step between adjacent hills (1 along a row, 6 or 7 between rows),
# the hills whose neighbour that many hills on is adjacent (a pair of PAIRS).
ONLY = tuple(bytes(int(byte == piece) for byte in range(256)) for piece in (EMPTY, WHITE, BLACK))
_STEPS = sorted({j - i for i, j in PAIRS})
_STEP_MASKS = tuple((8 * d, sum(1 << 8 * i for i, j in PAIRS if j - i == d)) for d in _STEPS)
(_S1, _M1), (_S6, _M6), (_S7, _M7) = _STEP_MASKS  # the steps are 1, 6 and 7


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
    board at a time: a hill fails when, for some step between adjacent hills, its
    neighbour that step on (or back) is not `colour`'s; the enemy hills left are it.
    """
    enemy = int.from_bytes(board.translate(ONLY[other(colour)]), "little")
    if not enemy:
        return []
    own = int.from_bytes(board.translate(ONLY[colour]), "little")
    fail = (_M1 & ~(own >> _S1)) | ((_M1 & ~own) << _S1)
    fail |= (_M6 & ~(own >> _S6)) | ((_M6 & ~own) << _S6)
    fail |= (_M7 & ~(own >> _S7)) | ((_M7 & ~own) << _S7)
    found = enemy & ~fail
    hills = []
    while found:  # lowest hill first
        low = found & -found
        hills.append((low.bit_length() - 1) >> 3)
        found ^= low
    return hills


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
    m = int.from_bytes(board.translate(ONLY[colour]), "little")
    return ((m & (m >> _S1) & _M1).bit_count() + (m & (m >> _S6) & _M6).bit_count()
            + (m & (m >> _S7) & _M7).bit_count())


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
