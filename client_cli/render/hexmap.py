"""Drawing hex cells in a terminal: pointy-top rows, each shifted half a cell.

Axial (q, r) cells go on text row r at column (2q + r) * half, so neighbours line up
the way they touch on the board. A column (one q, r growing) then runs down and to the
right; `with_column_labels` writes its name at both ends of it, one step beyond its
first and last cell, so a cell's column is read by following its slant to the edge.
Pure functions: cells in, lines of text out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

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


def with_column_labels(cells: Mapping[Hex, str], label: Callable[[int], str]) -> dict[Hex, str]:
    """`cells` plus `label(q)` just above the top cell and just below the bottom cell
    of every column q (the places (q, top - 1) and (q, bottom + 1), never a cell).

    Draw the result with `hex_rows`; rows holding only labels come out as extra rows
    (r above the first and below the last board row), which the caller leaves unnamed.
    """
    ends: dict[int, tuple[int, int]] = {}
    for q, r in cells:
        low, high = ends.get(q, (r, r))
        ends[q] = (min(low, r), max(high, r))
    out = dict(cells)
    for q, (low, high) in ends.items():
        out[(q, low - 1)] = label(q)
        out[(q, high + 1)] = label(q)
    return out

