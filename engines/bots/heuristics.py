"""Per-game position heuristics for greedy and MCTS bots, computed from views only.

`evaluate(game, view, players)` returns one value per seat in [0, 1] — roughly the
seat's chance of winning the match — from a view of the position (any seat's view
of a perfect-information game is the whole position). Heuristics read views, not
engine states, so they depend only on the documented view format; a game without a
heuristic gets 0.5 for everyone and search falls back on playouts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from engines.base import Outcome, View

Heuristic = Callable[[View, int], list[float]]
_HEURISTICS: dict[str, Heuristic] = {}


def heuristic(game: str) -> Callable[[Heuristic], Heuristic]:
    """Decorator: register the heuristic for `game`."""

    def wrap(fn: Heuristic) -> Heuristic:
        _HEURISTICS[game] = fn
        return fn

    return wrap


def has_heuristic(game: str) -> bool:
    return game in _HEURISTICS


def evaluate(game: str, view: View, players: int) -> list[float]:
    """Each seat's estimated chance of winning from `view` (0.5 each when unknown)."""
    fn = _HEURISTICS.get(game)
    if fn is None:
        return [1.0 / players] * players
    return fn(view, players)


def outcome_values(outcome: Outcome, players: int) -> list[float]:
    """A finished game's value per seat: a sole winner 1, tied winners share, losers 0."""
    share = 1.0 / len(outcome.winners) if outcome.winners else 0.0
    return [share if seat in outcome.winners else 0.0 for seat in range(players)]


def squash(margin: float, scale: float) -> float:
    """Map a score margin to (0, 1): 0 -> 0.5, +scale -> ~0.73."""
    return 1.0 / (1.0 + math.exp(-margin / scale))


def two_seat(value_seat0: float) -> list[float]:
    return [value_seat0, 1.0 - value_seat0]


# ----------------------------------------------------------------------------- Giantslayer


@heuristic("giantslayer")
def giantslayer(view: View, players: int) -> list[float]:
    """Captures so far, stones about to be flanked, and how close the giants are to the edge."""
    from engines.giantslayer import board as gs
    from engines.hexgrid import length

    board: Sequence[str] = view["board"]
    white_seat: int = view["white"]
    totals: list[float] = [float(t) for t in view["totals"]]
    if view.get("to_move") is None:  # match over
        return two_seat(squash(totals[0] - totals[1], 0.5))
    blacks = [i for i, p in enumerate(board) if p == "B"]
    whites = sum(1 for p in board if p == "W")
    flankable = [
        i for i in blacks
        if sum(1 for j in gs.NEIGHBOURS[i] if j != gs.NO_CELL and board[j] == "W") >= 2
    ]
    captured = 6 - len(blacks)
    # Black to move can save at most one flanked giant; White to move has already flanked.
    doomed = max(0, len(flankable) - 1) if view["to_move"] == "black" else 0
    white_points = captured + doomed
    # Black scores its survivors only by escaping: weigh each by its distance to the edge
    # and by how thin the white ring has become.
    reach = sum((length(gs.CELLS[i]) / gs.RADIUS) ** 2 for i in blacks)
    thinness = 1.0 - whites / 24.0
    black_points = reach * (0.4 + thinness)
    margin_white = white_points - black_points
    totals[white_seat] += 0.8 * margin_white  # expected, so discounted
    return two_seat(squash(totals[0] - totals[1], 1.5))


def _num(x: Any) -> float:
    return float(x) if isinstance(x, int | float) else 0.0


# ----------------------------------------------------------------------------- Tara


@heuristic("tara")
def tara(view: View, players: int) -> list[float]:
    """Bridges first, territory second (TA-9), plus sieges about to be executed (TA-4)."""
    from engines.tara import board as tb

    totals = [float(t) for t in view["totals"]]
    colours = view.get("colours")
    if not colours:  # match over
        return two_seat(squash(totals[0] - totals[1], 0.5))
    hills: dict[str, str] = view["hills"]
    symbol = {"white": "W", "black": "B"}
    mine = [symbol[colours[0]], symbol[colours[1]]]
    cells = [hills[name] for name in tb.NAMES]
    bridges, land = view["bridges"], view["territory"]
    margin = (bridges[0] - bridges[1]) + 0.3 * (land[0] - land[1])
    # A ringfort whose every neighbour is the enemy's will be captured: the capturer
    # gains the hill plus its links, the victim loses the hill.
    for seat in (0, 1):
        enemy = mine[1 - seat]
        sieges = 0
        for i, piece in enumerate(cells):
            if piece == enemy and all(cells[j] == mine[seat] for j in tb.NEIGHBOURS[i]):
                sieges += len(tb.NEIGHBOURS[i])
        margin += (sieges if seat == 0 else -sieges) * (1.0 if view["seat_to_move"] == seat else 0.6)
    # The board fills up: an empty hill links whoever takes it to their neighbours, and a
    # hill that only one side surrounds is that side's (the other would be captured there).
    for i, piece in enumerate(cells):
        if piece != ".":
            continue
        near = [cells[j] for j in tb.NEIGHBOURS[i]]
        k0, k1 = near.count(mine[0]), near.count(mine[1])
        if k0 == len(near):
            margin += 0.9 * k0 + 0.3
        elif k1 == len(near):
            margin -= 0.9 * k1 + 0.3
        else:
            margin += 0.4 * (k0 - k1)
    # The game's winner scores 2 + the margin, so a lead is worth more than its size.
    expected = margin + 2.0 * math.tanh(margin)
    return two_seat(squash(totals[0] - totals[1] + expected, 3.0))


# ----------------------------------------------------------------------------- Giant's Causeway


@heuristic("causeway")
def causeway(view: View, players: int) -> list[float]:
    """Towers first (3 win), then towers about to be completed and pieces in hand.

    Quick rules count stone colours in the finished towers instead (GC-Q2).
    """
    seats: dict[str, int] = view["seats"]
    white = seats["white"]
    stacks: dict[str, str] = view.get("stacks", {})
    towers = view.get("towers", {})
    if view.get("rules") == "quick":
        tall = [s for s in stacks.values() if len(s) == 3]
        whites = sum(s.lower().count("w") for s in tall)
        blacks = sum(s.lower().count("b") for s in tall)
        margin = 0.8 * (whites - blacks)
    else:
        margin = 2.5 * (_num(towers.get("white")) - _num(towers.get("black")))
        margin += 0.4 * (_num(view.get("specials", {}).get("white")) - _num(view.get("specials", {}).get("black")))
    # Height-2 stacks: whoever drops the third stone on one holding their colour can win it.
    for stack in stacks.values():
        if len(stack) == 2:
            lower = stack.lower()
            margin += 0.3 * (lower.count("w") - lower.count("b"))
    supply = view.get("supply", {})
    margin += 0.05 * (_num(supply.get("white")) - _num(supply.get("black")))
    value_white = squash(margin, 1.5)
    values = [0.5] * players
    values[white] = value_white
    values[1 - white] = 1.0 - value_white
    return values
