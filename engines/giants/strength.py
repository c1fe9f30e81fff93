"""GI-18 / GI-19: the strength of a hex and the pieces that carry a statue through it.

Strength in a hex comes from its pieces not yet used this turn (GI-18): worker,
sorcerer and neutral worker 1, chief 3 (always in full), log 1 — logs only in a hex
that holds at least one figure. Using an opponent's piece scores for its owner (GI-19).
`enter_costs` gives, for every hex that can carry a statue of a size, the cost of the
default assignment there (`engines.giants.transport` searches routes over these
costs); `best_use` names that assignment's pieces and `check_use` checks pieces a
player chose.

Default assignment (GI-18): fewest points to opponents, then fewest own figures;
DECIDED further ties: fewest logs, then fewer pieces, then a fixed piece order
(neutral, own sorcerer, own worker, opponents clockwise from the mover).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from engines.base import IllegalActionError
from engines.giants.board import Hex
from engines.giants.state import GameState

Cost = tuple[int, int, int, int]  # (opponent points, own figures, logs, pieces)
ZERO: Cost = (0, 0, 0, 0)
FIGURE_KINDS = frozenset("wscn")


def _has_figure(tokens: dict[str, list[int]]) -> bool:
    return any(t[0] in FIGURE_KINDS for t in tokens)


def piece_value(token: str, mover: int, size: int) -> tuple[int, int | None]:
    """(strength, seat scoring for it or None) of one piece used by `mover` (GI-19)."""
    kind, owner = token[0], (int(token[1:]) if len(token) > 1 else None)
    strength = 3 if kind == "c" else 1
    if owner is None or owner == mover:
        return strength, None
    return strength, owner


def unit_points(token: str, mover: int, size: int) -> int:
    """Points a piece gives its owner when `mover` uses it: chief = statue size."""
    _, scorer = piece_value(token, mover, size)
    if scorer is None:
        return 0
    return size if token[0] == "c" else 1


def _unit_key(token: str, mover: int, players: int) -> tuple[int, int, int, int]:
    kind = token[0]
    owner = int(token[1:]) if len(token) > 1 else None
    if kind == "l":
        return (0, 0, 1, 0)
    if owner is None or (kind == "n" and owner == mover):
        return (0, 0, 0, 1)
    if owner == mover:
        return (0, 1, 0, 2 if kind == "s" else 3)
    rel = (owner - mover) % players
    return (1, 0, 0, 10 + rel * 4 + "nws".index(kind))


def unit_keys(mover: int, players: int) -> dict[str, tuple[int, int, int, int]]:
    """`_unit_key` of every token a board can hold, for `mover` in a game of `players`."""
    keys = _UNIT_KEYS.get((mover, players))
    if keys is None:
        tokens = ["l", "n", *(f"{k}{s}" for k in "nws" for s in range(players))]
        keys = _UNIT_KEYS[mover, players] = {t: _unit_key(t, mover, players) for t in tokens}
    return keys


# Per (mover, players): at most 5 x 4 small maps of constants (no state).
_UNIT_KEYS: dict[tuple[int, int], dict[str, tuple[int, int, int, int]]] = {}


Units = list[tuple[tuple[int, int, int, int], str, int]]  # (order key, token, free), sorted


def hex_pieces(tokens: dict[str, list[int]], mover: int, players: int,
            keys: dict[str, tuple[int, int, int, int]] | None = None) -> tuple[Units, int, list[tuple[bool, str]]]:
    """What a hex offers `mover`, whatever the size: its unused single-strength pieces
    by token in `_unit_key` order (logs only beside a figure), how many in all, and
    its unused chiefs (own or not). `keys` is `unit_keys(mover, players)` (a caller
    looking at every hex passes it)."""
    figure_here = False
    for token in tokens:
        if token[0] in FIGURE_KINDS:
            figure_here = True
            break
    if keys is None:
        keys = unit_keys(mover, players)
    units: Units = []
    chiefs: list[tuple[bool, str]] = []
    have = 0
    for token, (count, used) in tokens.items():
        free = count - used
        if free <= 0 or (token == "l" and not figure_here):
            continue
        if token[0] == "c":
            chiefs.append((int(token[1:]) == mover, token))
            continue
        units.append((keys.get(token) or _unit_key(token, mover, players), token, free))
        have += free
    units.sort()
    return units, have, chiefs


def _pick(units: Units, have: int, chiefs: list[tuple[bool, str]], size: int) -> tuple[Cost, tuple[str, ...]] | None:
    """`best_use` from a hex's `hex_pieces`: the first `size` single pieces in key order,
    or a chief alone, whichever costs less (single pieces on a tie)."""
    best: tuple[Cost, int, tuple[str, ...]] | None = None
    if have >= size:
        use: list[str] = []
        a = b = c = 0
        for key, token, n in units:
            take = min(n, size - len(use))
            use += [token] * take
            a += key[0] * take
            b += key[1] * take
            c += key[2] * take
            if len(use) == size:
                break
        best = ((a, b, c, size), 0, tuple(use))
    for own, token in chiefs:
        option = ((0, 1, 0, 1) if own else (size, 0, 0, 1), 1, (token,))
        if best is None or option < best:
            best = option
    if best is None:
        return None
    return best[0], best[2]


def hex_cost(units: Units, have: int, chiefs: list[tuple[bool, str]], size: int) -> Cost | None:
    """`_pick(...)[0]` without the pieces: the least cost of the options (ties between
    options are broken on the pieces, which leave the cost as it is)."""
    best: Cost | None = None
    if have >= size:
        left, a, b, c = size, 0, 0, 0
        for key, _, n in units:
            take = n if n < left else left
            a += key[0] * take
            b += key[1] * take
            c += key[2] * take
            left -= take
            if not left:
                break
        best = (a, b, c, size)
    for own, _ in chiefs:
        option = (0, 1, 0, 1) if own else (size, 0, 0, 1)
        if best is None or option < best:
            best = option
    return best


def best_use(
    tokens: dict[str, list[int]], mover: int, size: int, players: int
) -> tuple[Cost, tuple[str, ...]] | None:
    """The default pieces for entering a hex with a statue of `size`, or None if too weak."""
    return _pick(*hex_pieces(tokens, mover, players), size)


def check_use(
    tokens: dict[str, list[int]], use: tuple[str, ...], mover: int, size: int
) -> dict[int, int]:
    """Validate a named assignment for one hex; return points per scoring seat."""
    counts = Counter(use)
    strength = 0
    points: dict[int, int] = {}
    for token, k in counts.items():
        count, used = tokens.get(token, (0, 0))
        if count - used < k:
            raise IllegalActionError(f"not enough unused {token} pieces there")
        if token == "l" and not _has_figure(tokens):
            raise IllegalActionError("logs carry only in a hex with a figure (GI-18)")
        s, scorer = piece_value(token, mover, size)
        strength += s * k
        if scorer is not None:
            points[scorer] = points.get(scorer, 0) + unit_points(token, mover, size) * k
    if strength < size:
        raise IllegalActionError(f"pieces of strength {strength} cannot carry size {size}")
    return points


def enter_costs(state: GameState, mover: int, size: int) -> dict[Hex, Cost]:
    """Default-assignment cost of entering each hex that can carry `size` (GI-18)."""
    return enter_costs_by_size(state, mover, (size,))[size]


def enter_costs_by_size(state: GameState, mover: int, sizes: Iterable[int]) -> dict[int, dict[Hex, Cost]]:
    """`enter_costs` for each of `sizes`, each hex's pieces sorted out once for all."""
    out: dict[int, dict[Hex, Cost]] = {size: {} for size in sizes}
    if not out:
        return out
    players = state.players
    keys = unit_keys(mover, players)
    for cell, tokens in state.board.items():
        units, have, chiefs = hex_pieces(tokens, mover, players, keys)
        if not have and not chiefs:
            continue
        for size, costs in out.items():
            found = hex_cost(units, have, chiefs, size)
            if found is not None:
                costs[cell] = found
    return out
