"""Giantslayer board: the radius-4 hex board, White `W`, Black giants `B`, centre `#`.

Cells are named as moves are typed (GS-14): a column letter `a`..`i` and a rank 1..9.
Rows run from rank 9 (top) to rank 1, each labelled with its rank on the left and its
first and last cell on the right; a column slants down to the right and its letter
stands at both ends of it (lower case, beside the board), so a move like `a5-b5` can
be read off.
"""

from __future__ import annotations

from typing import Any

from client_cli.render.hexmap import hex_rows, with_column_labels

RADIUS = 4


def _name(q: int, r: int) -> str:
    return f"{chr(ord('a') + q + RADIUS)}{RADIUS + 1 - r}"


def render(view: dict[str, Any], seat: int | None = None) -> str:
    """The board and the match state as text (from any seat's or a spectator's view)."""
    names: list[str] = view["cells"]
    board: list[str] = view["board"]
    piece = dict(zip(names, board, strict=True))
    last = view.get("last_move") or ""
    touched = {part for part in last.replace("x", "-").split("-") if part}
    cells: dict[tuple[int, int], str] = {}
    for q in range(-RADIUS, RADIUS + 1):
        for r in range(-RADIUS, RADIUS + 1):
            if max(abs(q), abs(r), abs(q + r)) > RADIUS:
                continue
            name = _name(q, r)
            symbol = "#" if (q, r) == (0, 0) else piece.get(name, "?")
            if name in touched and symbol == ".":
                symbol = "o"  # where a stone just left (or a giant trampled)
            cells[(q, r)] = symbol
    rows = hex_rows(with_column_labels(cells, lambda q: _name(q, 0)[0]), half=1)
    width = max(len(text) for _, text in rows)
    lines = []
    for r, text in rows:
        if abs(r) > RADIUS:  # the row of column letters above or below the board
            lines.append(f"   {text}".rstrip())
            continue
        q_lo, q_hi = max(-RADIUS, -RADIUS - r), min(RADIUS, RADIUS - r)
        lines.append(f"{RADIUS + 1 - r}  {text.ljust(width)}   {_name(q_lo, r)}..{_name(q_hi, r)}")
    white, black = view["white"], view["black"]
    totals = view["totals"]

    def who(s: int) -> str:
        return f"seat {s}" + (" (you)" if seat == s else "")

    head = [
        f"Giantslayer - round {view['round']} of {view['rounds']}",
        f"White (W, halogai): {who(white)}   Black (B, giants): {who(black)}",
        f"Match points: seat 0 {totals[0]}, seat 1 {totals[1]}",
        f"Giants left {view['black_left']}/6, halogai left {view['white_left']}/24, "
        f"quiet plies {view['quiet_plies']}/100",
    ]
    to_move = view.get("to_move")
    head.append(f"To move: {to_move.capitalize()}" if to_move else "Match over")
    if last:
        head.append(f"Last move: {last}")
    for i, res in enumerate(view.get("results", [])):
        head.append(
            f"Round {i + 1}: White seat {res['white']} {res['white_points']} - "
            f"Black {res['black_points']} ({res['reason']})"
        )
    return "\n".join([*head, "", *lines, "", "W white  B black  . empty  # centre  o just vacated  a-i columns, 1-9 ranks: e5 is the centre"])
