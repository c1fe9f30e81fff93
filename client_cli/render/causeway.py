"""Giant's Causeway board: the stones and giants on the open hex plane.

Each occupied cell shows its stack bottom to top (`w`/`b` blanks, `W`/`B` the
barrier or spellstone on top) or a giant: `Gw`/`Gb` (barrier edition), `Tw`/`Sw`
trapper and spikey (spellstone and quick). Empty cells next to the Causeway are `.`,
the places a giant may step to. Cells are written `q,r` as in moves (GC-1): rows are
labelled with r on the left and the q range of their cells on the right (q grows to
the right along a row); a column (one q) slants down to the right and its q stands
at both ends of it, beside the drawn cells, so `0,1` is found where column 0 meets row
r=1.
"""

from __future__ import annotations

from typing import Any

from client_cli.render.hexmap import hex_rows, with_column_labels
from engines.hexgrid import neighbors

GIANT_LETTERS = {"giant": "G", "trapper": "T", "spikey": "S"}


def _cell(name: str) -> tuple[int, int]:
    q, r = name.split(",")
    return int(q), int(r)


def render(view: dict[str, Any], seat: int | None = None) -> str:
    stacks: dict[str, str] = view.get("stacks", {})
    giants: dict[str, list[str]] = view.get("giants", {})
    cells: dict[tuple[int, int], str] = {}
    for name, stack in stacks.items():
        cells[_cell(name)] = stack
    for name, (colour, kind) in giants.items():
        cells[_cell(name)] = GIANT_LETTERS.get(kind, "G") + colour[0]
    for cell in list(cells):
        for near in neighbors(cell):
            cells.setdefault(near, ".")
    rows = hex_rows(with_column_labels(cells, str), half=2)
    width = max((len(text) for _, text in rows), default=0)
    lines = []
    for r, text in rows:
        qs = [q for q, rr in cells if rr == r]
        if not qs:  # only column numbers: the row above or below the drawn cells
            lines.append(f"      {text}".rstrip())
            continue
        lines.append(f"r={r:<3} {text.ljust(width)}   q={min(qs)}..{max(qs)}")
    seats: dict[str, int] = view.get("seats", {})

    def who(colour: str) -> str:
        s = seats.get(colour)
        return f"{colour.capitalize()} seat {s}" + (" (you)" if s is not None and s == seat else "")

    towers = view.get("towers", {})
    supply = view.get("supply", {})
    special = view.get("special")
    specials = view.get("specials", {})
    head = [f"Giant's Causeway ({view.get('rules')}) - {view.get('phase')}, ply {view.get('ply')}/{view.get('ply_cap')}"]
    for colour in ("white", "black"):
        extra = f", {special}s in play {specials.get(colour, 0)}" if special else ""
        head.append(f"{who(colour)}: towers {towers.get(colour, 0)}, blanks in supply "
                    f"{supply.get(colour, 0)}{extra}")
    won = view.get("won") or {}
    if won:
        head.append("Won towers: " + ", ".join(f"{cell} ({colour})" for cell, colour in sorted(won.items())))
    setup = view.get("setup_left") or {}
    for colour, left in setup.items():
        if left:
            head.append(f"{colour.capitalize()} still to place: {', '.join(left)}")
    # Whose turn it is and the last move are the room's (its header and recent moves).
    if view.get("end"):
        head.append(f"Ended: {view['end']}")
    legend = ("stacks bottom->top: w b blanks, W B barrier/spellstone; Gw Gb giants, "
              "Tw/Tb trappers, Sw/Sb spikeys; . empty cell next to the Causeway; "
              "numbers beside the cells: q of the column (slanting down to the right) they end; "
              "a cell is q,r")
    return "\n".join([*head, "", *lines, "", legend])
