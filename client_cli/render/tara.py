"""Tara board: the 45-hill cross (7 x 7 without corners), ringforts and their bridges.

White ringforts `W`, black `B`, vacant hills `.`; a bridge between two adjacent
ringforts of one colour is drawn as `-` or `|` (TA-6 links them automatically).
Row 7 is at the top, column A on the left; column letters stand above and below the
grid and row numbers on both sides, so `D4` (TA-11) is read straight off it.
"""

from __future__ import annotations

from typing import Any

COLUMNS = "ABCDEFG"
ROWS = range(7, 0, -1)
CORNERS = {"A1", "A7", "G1", "G7"}


def render(view: dict[str, Any], seat: int | None = None) -> str:
    hills: dict[str, str] = view["hills"]
    last = (view.get("last_move") or "").lstrip("x")
    besieged = set(view.get("must_capture") or [])

    def at(col: int, row: int) -> str:
        name = f"{COLUMNS[col]}{row}"
        return "" if name in CORNERS else hills.get(name, " ")

    ruler = "    " + "   ".join(COLUMNS)
    lines = [ruler]
    for row in ROWS:
        cells = []
        for col in range(7):
            piece = at(col, row)
            name = f"{COLUMNS[col]}{row}"
            mark = "*" if name == last else "!" if name in besieged else " "
            cells.append((piece or " ") + mark)
            if col < 6:
                right = at(col + 1, row)
                cells.append("- " if piece in ("W", "B") and piece == right else "  ")
        lines.append(f"{row}   " + "".join(cells).ljust(26) + f"  {row}")
        if row > 1:
            links = []
            for col in range(7):
                piece, below = at(col, row), at(col, row - 1)
                links.append("|   " if piece in ("W", "B") and piece == below else "    ")
            joined = "    " + "".join(links).rstrip()
            lines.append(joined if joined.strip() else "")
    lines.append(ruler)
    colours = view.get("colours") or []
    bridges, left, land = view["bridges"], view["bridges_left"], view["territory"]

    def who(s: int) -> str:
        tags = [colours[s].capitalize()] if colours else []
        if s == seat:
            tags.append("you")
        return f"seat {s}" + (f" ({', '.join(tags)})" if tags else "")

    head = [
        f"Tara - game {view['game']} of {view['games']}",
        f"{who(0)}: bridges {bridges[0]} ({left[0]} left), territory {land[0]}, match points {view['totals'][0]}",
        f"{who(1)}: bridges {bridges[1]} ({left[1]} left), territory {land[1]}, match points {view['totals'][1]}",
    ]
    if view.get("to_move"):
        head.append(f"To move: {view['to_move'].capitalize()} (seat {view['seat_to_move']})"
                    + (f" - must capture one of {', '.join(sorted(besieged))}" if besieged else ""))
    else:
        head.append("Match over")
    if view.get("out") and view.get("to_move"):  # a finished match has no "one more turn"
        head.append(f"{view['out'].capitalize()} has called OUT: one more turn for the other side")
    if view.get("last_move"):
        head.append(f"Last move: {view['last_move']}")
    for i, res in enumerate(view.get("results", [])):
        head.append(f"Game {i + 1}: points {res.get('points')} ({res.get('reason')})")
    legend = "W white  B black  . vacant  bridges - and |  * last move  ! besieged (capture with xD4)"
    return "\n".join([*head, "", *lines, "", legend])
