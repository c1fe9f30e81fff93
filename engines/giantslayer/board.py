"""Giantslayer's board, notation and move rules (GS-1 … GS-12, GS-14), no state.

Board cells are indexed 0–60 in (q, r) order; precomputed neighbour, jump and ray
tables keep move generation fast enough for search bots, and the legal list is
written in notation straight from them (`white_notation`, `black_notation`). Notation
(GS-14): a cell is a column letter a–i (q = -4 … 4) and a rank 1–9 (rank = 5 - r),
so the impassable centre is `e5`. A white slide or a black step is `from-to`
(`a5-b5`), a trample chain `from x landing x landing …` (`e6xe8xc8`), and a forced
pass (GS-12) is `pass`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import compress, pairwise
from operator import itemgetter
from typing import Any

from engines import hexgrid
from engines.base import (
    FixedNotation,
    NotationError,
)

# ----------------------------------------------------------------------------- board

RADIUS = 4
CELLS: tuple[hexgrid.Hex, ...] = tuple(hexgrid.disk(RADIUS))  # GS-1: 61 cells
INDEX: dict[hexgrid.Hex, int] = {cell: i for i, cell in enumerate(CELLS)}
CENTRE = INDEX[(0, 0)]
NAMES: tuple[str, ...] = tuple(f"{chr(ord('a') + q + RADIUS)}{RADIUS + 1 - r}" for q, r in CELLS)
BY_NAME: dict[str, int] = {name: i for i, name in enumerate(NAMES)}
# The one list every view shares (never mutated): a room's diff skips it by identity,
# so the 61 names reach a client in its snapshot only.
CELL_NAMES: list[str] = list(NAMES)
EDGE: frozenset[int] = frozenset(i for i, c in enumerate(CELLS) if hexgrid.length(c) == RADIUS)  # GS-3

EMPTY, WHITE, BLACK = 0, 1, 2
SYMBOLS = ".WB"
TO_SYMBOLS = bytes.maketrans(bytes(range(len(SYMBOLS))), SYMBOLS.encode())
NO_CELL = -1


def _neighbour(i: int, d: int, times: int = 1) -> int:
    """Index of the cell `times` steps away, or NO_CELL if off the board or the centre (GS-2)."""
    j = INDEX.get(hexgrid.step(CELLS[i], d, times), NO_CELL)
    return NO_CELL if j == CENTRE else j


NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(
    tuple(_neighbour(i, d) for d in range(6)) for i in range(len(CELLS))
)
JUMPS: tuple[tuple[int, ...], ...] = tuple(
    tuple(_neighbour(i, d, 2) if NEIGHBOURS[i][d] != NO_CELL else NO_CELL for d in range(6))
    for i in range(len(CELLS))
)
# The trampled cell of each jump, keyed by (from, landing).
JUMPED: dict[tuple[int, int], int] = {
    (i, JUMPS[i][d]): NEIGHBOURS[i][d]
    for i in range(len(CELLS))
    for d in range(6)
    if JUMPS[i][d] != NO_CELL
}


def _ray(i: int, d: int) -> tuple[int, ...]:
    cells = []
    k = 1
    while (j := _neighbour(i, d, k)) != NO_CELL:  # stops at the edge and before the centre
        cells.append(j)
        k += 1
    return tuple(cells)


RAYS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(_ray(i, d) for d in range(6)) for i in range(len(CELLS))
)

STONES_PER_SIDE = {WHITE: 24, BLACK: 6}


def initial_board() -> bytes:
    """GS-4: White on the 24 edge cells, Black on the 6 cells around the centre."""
    board = bytearray(len(CELLS))
    for i, cell in enumerate(CELLS):
        distance = hexgrid.length(cell)
        if distance == RADIUS:
            board[i] = WHITE
        elif distance == 1:
            board[i] = BLACK
    return bytes(board)


INITIAL_BOARD = initial_board()
QUIET_PLY_LIMIT = 100  # GS-11
MAX_ROUNDS = 10
# Per round: at most 30 captures, each after at most 100 quiet plies (GS-11).
PLIES_PER_ROUND_BOUND = (sum(STONES_PER_SIDE.values()) + 1) * (QUIET_PLY_LIMIT + 1)

# ----------------------------------------------------------------------------- actions


@dataclass(frozen=True, slots=True)
class Move:
    """One ply. `path` is (from, to) for a slide or step, (from, landing, …) for a
    trample chain, and empty for a pass."""

    path: tuple[int, ...]
    trample: bool = False


PASS = Move(())


def format_move(move: Move) -> str:
    if not move.trample:
        # Every slide and step (and the pass) by its path, one lookup: a room formats
        # each move twice (its log entry, the state's `last_move`).
        text = PATH_TEXTS.get(move.path)
        if text is not None:
            return text
    path = move.path
    if len(path) == 2 and not move.trample:  # not along a line: an illegal move's text
        return _pair(path[0], path[1])
    return ("x" if move.trample else "-").join([NAMES[i] for i in path])


# Moves read so far, by their text (every move a room applies is read first): a Move is
# immutable, so one object serves every reading. Short texts only, emptied when full.
_PARSED: dict[str, Move] = {}
_PARSED_MAX = 4096
_PARSED_TEXT_MAX = 40


def parse_move(text: str) -> Move:
    """Read `a5-b5`, `e6xe8xc8` or `pass`; raise NotationError for anything else."""
    move = MOVES_BY_TEXT.get(text)  # every slide and step as `format_move` writes it
    if move is None:
        move = _PARSED.get(text)
    if move is None:
        move = _parse_move(text)
        if len(text) <= _PARSED_TEXT_MAX:
            if len(_PARSED) >= _PARSED_MAX:
                _PARSED.clear()
            _PARSED[text] = move
    return move


def _parse_move(text: str) -> Move:
    raw = text.strip().lower()
    if raw == "pass":
        return PASS
    trample = "x" in raw
    if trample and "-" in raw:
        raise NotationError(f"{text!r}: a move is either from-to or a trample chain with x")
    parts = raw.split("x" if trample else "-")
    if len(parts) < 2 or (not trample and len(parts) != 2):
        raise NotationError(f"{text!r}: expected from-to (a5-b5), a chain (e6xe8xc8) or pass")
    try:
        path = tuple(BY_NAME[p.strip()] for p in parts)
    except KeyError as exc:
        raise NotationError(f"{text!r}: no cell {exc.args[0]!r} (cells run a1 … i9)") from None
    return Move(path, trample)


# ----------------------------------------------------------------------------- rules


def white_moves(board: bytes) -> list[Move]:
    """GS-5: slide one white stone any distance along a clear straight line."""
    moves = []
    for i, piece in enumerate(board):
        if piece != WHITE:
            continue
        for ray in RAYS[i]:
            for j in ray:
                if board[j]:
                    break
                moves.append(Move((i, j)))
    return moves


def black_moves(board: bytes) -> list[Move]:
    """GS-6: steps to an adjacent vacant cell, then every prefix of every trample chain."""
    moves: list[Move] = []
    work = bytearray(board)
    for i, piece in enumerate(board):
        if piece != BLACK:
            continue
        for j in NEIGHBOURS[i]:
            if j != NO_CELL and not board[j]:
                moves.append(Move((i, j)))
        work[i] = EMPTY  # the jumping stone's own cell is vacant once it leaves
        _trample_chains(work, i, (i,), moves)
        work[i] = BLACK
    return moves


def _trample_chains(work: bytearray, at: int, path: tuple[int, ...], out: list[Move]) -> None:
    for d in range(6):
        over = NEIGHBOURS[at][d]
        land = JUMPS[at][d]
        if land != NO_CELL and work[over] == WHITE and not work[land]:
            work[over] = EMPTY  # removed at once: later jumps see it vacant
            chain = (*path, land)
            out.append(Move(chain, trample=True))
            _trample_chains(work, land, chain, out)
            work[over] = WHITE


# Notation of one step or slide, by from * 64 + to, built on first use: writing the
# legal list (sent to the acting seat after every move) is then one lookup a move.
_PAIRS: dict[int, str] = {}


def _pair(i: int, j: int) -> str:
    key = i * 64 + j
    text = _PAIRS.get(key)
    if text is None:
        text = _PAIRS[key] = f"{NAMES[i]}-{NAMES[j]}"
    return text


# For each cell, its non-empty rays as (cell, notation of the slide there) pairs: a
# white slide's text is then read off, not built (the legal list is written after every
# move), and a ray off the board costs nothing.
RAY_STEPS: tuple[tuple[tuple[tuple[int, str], ...], ...], ...] = tuple(
    tuple(tuple((j, _pair(i, j)) for j in ray) for ray in rays if ray) for i, rays in enumerate(RAYS)
)
# A white slide (from, to) -> the cells it crosses, its destination included: `is_legal`
# checks a slide with one lookup instead of walking the six rays.
SLIDE_CELLS: dict[tuple[int, int], tuple[int, ...]] = {
    (i, ray[k]): ray[: k + 1] for i, rays in enumerate(RAYS) for ray in rays for k in range(len(ray))
}

# The text of every slide or step (a step is a slide of one cell) by its path, and the
# pass's: `format_move`. One shared str per step or slide (`_pair`'s): a view's
# `quiet_moves` then repeats the previous view's objects, which the diff passes by identity.
PATH_TEXTS: dict[tuple[int, ...], str] = {(): "pass", **{(i, j): _pair(i, j) for i, j in SLIDE_CELLS}}
# The other way round: the Move of every text in PATH_TEXTS, made at import (a constant
# table, 985 entries, ~73 KB). `parse_move` reads all but the trample chains here: a
# text met for the first time costs a dict lookup instead of `_parse_move` (~12,000
# instructions), and a room meets most texts for the first time (the room part of
# bench/move_instructions.py: 212 of 400 moves).
MOVES_BY_TEXT: dict[str, Move] = {text: Move(path) if path else PASS for path, text in PATH_TEXTS.items()}



# Per piece, a table `bytes.translate` turns a board into 1 where that piece stands
# and 0 elsewhere: `itertools.compress` over the cell numbers then gives its cells at C
# speed, no `find` call per stone.
ONLY: dict[int, bytes] = {piece: bytes(int(p == piece) for p in range(256)) for piece in (WHITE, BLACK)}
CELL_NUMBERS = range(len(CELLS))


def _white_notation_source(lines_form: bool = False) -> str:
    """`white_notation`'s code: per cell, an `if` for a white stone there, then per ray
    one nested `if` a cell, whose branches add the ray's slides as far as it is clear
    (a constant tuple of their texts added at once from three slides up, appended one by
    one below: `+=` costs about three appends). A loop over table rows costs ~12
    bytecodes a ray (the row unpacked, the cell looked up) and ~13 a free cell; the
    unrolled code 2 and 2-6, no table read: the board is unpacked into one local a cell
    (`c0` ... `c60`) at the start, each a single LOAD_FAST where `cells[5]` was three
    bytecodes (a White list: ~1,100 bytecodes instead of ~1,590; tests/engines/
    giantslayer/test_giantslayer_fast_paths.py checks it against `white_moves`). The
    list is a FixedNotation: every slide's text has SLIDE_WIDTH characters.

    `lines_form`: `white_lines`' code instead, the same branches, each appending one
    constant str, its slides each preceded by a line break, joined at the end."""
    name, start, end = ("white_lines", "out = []", "return ''.join(out)") if lines_form else (
        "white_notation", "out = FixedNotation()", "return out")
    lines = [
        f"def {name}(board: bytes) -> {'str' if lines_form else 'list[str]'}:",
        f"    {start}",
        *([] if lines_form else [f"    out.width = {SLIDE_WIDTH}"]),
        # every cell a local: `c5` read is one bytecode, `cells[5]` three
        f"    {', '.join(f'c{i}' for i in range(len(RAY_STEPS)))} = board",
    ]

    def emit(texts: list[str], indent: str) -> None:
        if lines_form:
            lines.append(f"{indent}out.append({''.join(chr(10) + text for text in texts)!r})")
        elif len(texts) >= 3:
            lines.append(f"{indent}out += {tuple(texts)!r}")
        else:
            lines.extend(f"{indent}out.append({text!r})" for text in texts)  # the interpreter's own append

    for i, rays in enumerate(RAY_STEPS):
        if not rays:  # the centre
            continue
        lines.append(f"    if c{i} == {WHITE}:")
        for ray in rays:
            texts = [text for _, text in ray]
            for m, (j, _) in enumerate(ray):  # the ray clear up to cell m, which is j
                indent = "        " + "    " * m
                lines.append(f"{indent}if not c{j}:")
                if m == len(ray) - 1:
                    emit(texts, indent + "    ")
            for m in range(len(ray) - 1, 0, -1):  # the else of the `if` for cell m: slides 0 … m-1
                indent = "        " + "    " * m
                lines.append(f"{indent}else:")
                emit(texts[:m], indent + "    ")
    lines.append(f"    {end}")
    return "\n".join(lines) + "\n"


# Every slide's text is a letter and a digit, a dash, a letter and a digit (`a5-b5`):
# the white list is a FixedNotation of this width, which a room packs in one join.
SLIDE_WIDTH = 5
if {len(text) for rays in RAY_STEPS for ray in rays for _, text in ray} != {SLIDE_WIDTH}:
    raise RuntimeError("a slide's text is not SLIDE_WIDTH characters")  # FixedNotation's promise


def _compile_white_notation(lines_form: bool = False) -> Callable[[bytes], Any]:
    namespace: dict[str, Any] = {"FixedNotation": FixedNotation}
    name = "white_lines" if lines_form else "white_notation"
    exec(compile(_white_notation_source(lines_form), f"<{__name__}.{name}>", "exec"), namespace)
    function: Callable[[bytes], Any] = namespace[name]
    function.__doc__ = ("`white_notation`'s slides as one str, each preceded by a line break ('' for none)"
                        if lines_form else "`white_moves` in notation, same order, without building Move objects.")
    function.__module__ = __name__
    return function


white_notation: Callable[[bytes], list[str]] = _compile_white_notation()
# `"".join("\n" + text for text in white_notation(board))` without the list (~54 appends
# of constant strs a White turn instead of ~128 entries added): what a room packs
# (`Giantslayer.legal_lines`).
white_lines: Callable[[bytes], str] = _compile_white_notation(lines_form=True)


# A cell past the end of every jump, which `black_notation` reads as a stone.
PAST_END = len(CELLS)

# For each cell, per direction with a neighbour on the board: that neighbour, the step's
# notation, and the cell a jump over it lands on (PAST_END if none): `black_notation`
# looks at each neighbour once for a step and for a jump.
BLACK_STEPS: tuple[tuple[tuple[int, str, int], ...], ...] = tuple(
    tuple(
        (NEIGHBOURS[i][d], _pair(i, NEIGHBOURS[i][d]), JUMPS[i][d] if JUMPS[i][d] != NO_CELL else PAST_END)
        for d in range(6)
        if NEIGHBOURS[i][d] != NO_CELL
    )
    for i in range(len(CELLS))
)


def _black_steps_source(i: int) -> str:
    """The code of `BLACK_STEP_TEXTS[i]`: per neighbour of cell i in direction order, one
    `if` for a step there and one `elif` for a jump over a white stone to a vacant
    landing, each text a constant (the loop over `BLACK_STEPS` rows it replaces costs
    ~15 bytecodes a neighbour, this 5-9)."""
    lines = [f"def steps_{i}(work: list[int], out: list[str]) -> bool:", "    jumps = False"]
    for j, text, land in BLACK_STEPS[i]:
        lines += [f"    if not work[{j}]:", f"        out.append({text!r})"]
        if land != PAST_END:
            lines += [f"    elif work[{j}] == {WHITE} and not work[{land}]:", "        jumps = True"]
    lines.append("    return jumps")
    return "\n".join(lines) + "\n"


def _compile_black_steps(i: int) -> Callable[[list[int], list[str]], bool]:
    namespace: dict[str, Any] = {}
    exec(compile(_black_steps_source(i), f"<{__name__}.BLACK_STEP_TEXTS[{i}]>", "exec"), namespace)
    function: Callable[[list[int], list[str]], bool] = namespace[f"steps_{i}"]
    function.__doc__ = "Append the steps of a black stone on this cell; say whether it has a jump."
    function.__module__ = __name__
    return function


# Per cell, a function that appends a black stone's steps from there to the list and
# says whether it can jump (`black_notation`, checked against `black_moves`).
BLACK_STEP_TEXTS: tuple[Callable[[list[int], list[str]], bool], ...] = tuple(
    _compile_black_steps(i) for i in range(len(CELLS))
)


def black_notation(board: bytes, blacks: Iterable[int] | None = None) -> list[str]:
    """`black_moves` in notation, same order: a stone's steps, then its trample chains.

    `blacks`: the black stones' cells in cell order, if known (a state keeps them)."""
    out: list[str] = []
    # The board as the chains change it (restored after each), then WHITE on PAST_END:
    # never a vacant landing.
    work = [*board, WHITE]
    if blacks is None:
        blacks = compress(CELL_NUMBERS, board.translate(ONLY[BLACK]))
    for i in blacks:
        if not BLACK_STEP_TEXTS[i](work, out):  # its steps written; no jump
            continue
        work[i] = EMPTY  # the jumping stone's own cell is vacant once it leaves
        for over, land, name in JUMP_STEPS[i]:  # `_trample_text`'s first jump, inlined
            if work[over] == WHITE and not work[land]:
                work[over] = EMPTY
                chain = f"{NAMES[i]}x{name}"
                out.append(chain)
                _trample_text(work, land, chain, out)
                work[over] = WHITE
        work[i] = BLACK
    return out


# For each cell, its jumps on the board as (jumped cell, landing cell, landing's name).
JUMP_STEPS: tuple[tuple[tuple[int, int, str], ...], ...] = tuple(
    tuple((NEIGHBOURS[i][d], JUMPS[i][d], NAMES[JUMPS[i][d]]) for d in range(6) if JUMPS[i][d] != NO_CELL)
    for i in range(len(CELLS))
)


def _trample_text(work: list[int], at: int, text: str, out: list[str]) -> None:
    for over, land, name in JUMP_STEPS[at]:
        if work[over] == WHITE and not work[land]:
            work[over] = EMPTY
            chain = f"{text}x{name}"
            out.append(chain)
            _trample_text(work, land, chain, out)
            work[over] = WHITE


def moves_for(board: bytes, white_to_move: bool) -> list[Move]:
    moves = white_moves(board) if white_to_move else black_moves(board)
    return moves or [PASS]  # GS-12: a side with no legal move passes


def is_legal(board: bytes, white_to_move: bool, move: Move) -> bool:
    """Check one move without generating them all (the hot path of `apply`)."""
    path = move.path
    if not path:
        return moves_for(board, white_to_move) == [PASS]
    start = path[0]
    if not 0 <= start < len(board) or board[start] != (WHITE if white_to_move else BLACK):
        return False
    if white_to_move:
        if move.trample or len(path) != 2:
            return False
        crossed = SLIDE_CELLS.get((start, path[1]))
        return crossed is not None and not any(map(board.__getitem__, crossed))
    if not move.trample:
        return len(path) == 2 and path[1] in NEIGHBOURS[start] and not board[path[1]]
    work = bytearray(board)
    work[start] = EMPTY
    for a, b in pairwise(path):
        over = JUMPED.get((a, b))
        if over is None or work[over] != WHITE or work[b]:
            return False
        work[over] = EMPTY
    return True


def cells_of(board: bytes | bytearray, piece: int) -> list[int]:
    """The cells holding `piece`, in cell order (found at C speed)."""
    out: list[int] = []
    find = board.find
    i = find(piece)
    while i >= 0:
        out.append(i)
        i = find(piece, i + 1)
    return out


def _around(i: int) -> Callable[[bytes | bytearray], tuple[int, ...]]:
    """A getter of the pieces on cell i's neighbours, as a tuple (read at C speed)."""
    cells = [j for j in NEIGHBOURS[i] if j != NO_CELL]
    if len(cells) < 2:  # never flanked (itemgetter of one cell would not give a tuple)
        return lambda board: ()
    return itemgetter(*cells)


AROUND = tuple(_around(i) for i in range(len(CELLS)))
# Per cell, the int that keeps the low bit of each neighbour's byte in a board read by
# `int.from_bytes(board, "little")`: of the pieces only WHITE (1) is odd, so
# `(pieces & WHITE_NEIGHBOURS[i]).bit_count()` counts cell i's white neighbours (GS-7).
WHITE_NEIGHBOURS: tuple[int, ...] = tuple(sum(1 << 8 * j for j in set(NEIGHBOURS[i]) - {NO_CELL}) for i in range(len(CELLS)))


def flanked(board: bytes | bytearray) -> list[int]:
    """GS-7: black stones with two or more white neighbours."""
    return [i for i in cells_of(board, BLACK) if AROUND[i](board).count(WHITE) >= 2]


def all_on_edge(board: bytes | bytearray) -> bool:
    return EDGE.issuperset(cells_of(board, BLACK))


def count(board: bytes | bytearray, piece: int) -> int:
    return board.count(piece)


