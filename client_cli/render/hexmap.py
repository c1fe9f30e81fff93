"""Drawing hex cells in a terminal: pointy-top rows, each shifted half a cell.

Axial (q, r) cells go on text row r at column (2q + r) * half, so neighbours line up
the way they touch on the board. Pure functions: cells in, lines of text out.
"""

from __future__ import annotations

from collections.abc import Mapping

Hex = tuple[int, int]


def hex_rows(cells: Mapping[Hex, str], half: int = 1) -> list[tuple[int, str]]:
    """One (r, text) pair per board row, top (smallest r) first.

    `cells` maps each drawn cell to its token (at most 2 * half - 1 characters wide so
    tokens stay apart); `half` is half a cell's width in characters.
    """
    if not cells:
        return []
    left = min(2 * q + r for q, r in cells)
    rows: dict[int, dict[int, str]] = {}
    for (q, r), token in cells.items():
        rows.setdefault(r, {})[(2 * q + r - left) * half] = token
    out: list[tuple[int, str]] = []
    for r in sorted(rows):
        line = ""
        for x in sorted(rows[r]):
            line = line.ljust(x) + rows[r][x]
        out.append((r, line.rstrip()))
    return out
