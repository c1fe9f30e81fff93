"""Hex geometry shared by the hex-board games.

Axial coordinates (q, r) with s = -q - r, as in GS-1 and GC-1. The six directions,
in this fixed order, are (+1,0) (+1,-1) (0,-1) (-1,0) (-1,+1) (0,+1); direction d
and direction (d + 3) % 6 are opposite. GIANTS' map is drawn in "odd-r" offset
coordinates; `offset_to_axial` / `axial_to_offset` convert.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

Hex = tuple[int, int]

DIRECTIONS: tuple[Hex, ...] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
ORIGIN: Hex = (0, 0)


def add(a: Hex, b: Hex) -> Hex:
    return (a[0] + b[0], a[1] + b[1])


def scale(a: Hex, k: int) -> Hex:
    return (a[0] * k, a[1] * k)


def step(cell: Hex, direction: int, times: int = 1) -> Hex:
    """The cell `times` steps from `cell` along direction index `direction`."""
    dq, dr = DIRECTIONS[direction]
    return (cell[0] + dq * times, cell[1] + dr * times)


def opposite(direction: int) -> int:
    return (direction + 3) % 6


def neighbors(cell: Hex) -> list[Hex]:
    """The six adjacent cells, in direction order."""
    q, r = cell
    return [(q + dq, r + dr) for dq, dr in DIRECTIONS]


def length(cell: Hex) -> int:
    """Distance from the origin."""
    q, r = cell
    return max(abs(q), abs(r), abs(q + r))


def distance(a: Hex, b: Hex) -> int:
    return length((a[0] - b[0], a[1] - b[1]))


def direction_between(a: Hex, b: Hex) -> int | None:
    """The direction index d such that b lies on the straight line from a along d."""
    dq, dr = b[0] - a[0], b[1] - a[1]
    n = max(abs(dq), abs(dr), abs(dq + dr))
    if n == 0 or dq % n or dr % n:
        return None
    unit = (dq // n, dr // n)
    return DIRECTIONS.index(unit) if unit in DIRECTIONS else None


def ring(center: Hex, radius: int) -> list[Hex]:
    """Cells at exactly `radius` from `center`, walking the ring; [center] for radius 0."""
    if radius == 0:
        return [center]
    cells: list[Hex] = []
    cell = step(center, 4, radius)
    for direction in range(6):
        for _ in range(radius):
            cells.append(cell)
            cell = step(cell, direction)
    return cells


def disk(radius: int, center: Hex = ORIGIN) -> list[Hex]:
    """Cells within `radius` of `center`, sorted by (q, r)."""
    cq, cr = center
    return sorted(
        (cq + q, cr + r)
        for q in range(-radius, radius + 1)
        for r in range(max(-radius, -q - radius), min(radius, -q + radius) + 1)
    )


def ray(cell: Hex, direction: int) -> Iterator[Hex]:
    """The endless straight line from `cell` (exclusive) along `direction`."""
    dq, dr = DIRECTIONS[direction]
    q, r = cell
    while True:
        q, r = q + dq, r + dr
        yield (q, r)


def common_neighbors(a: Hex, b: Hex) -> list[Hex]:
    """For adjacent a and b: the two cells adjacent to both (the slide-rule gate)."""
    nb = set(neighbors(b))
    return [c for c in neighbors(a) if c in nb]


def is_connected(cells: Iterable[Hex]) -> bool:
    """True if the cells form one edge-connected group (an empty set counts as connected)."""
    remaining = set(cells)
    if not remaining:
        return True
    stack = [remaining.pop()]
    while stack:
        q, r = stack.pop()
        for dq, dr in DIRECTIONS:
            n = (q + dq, r + dr)
            if n in remaining:
                remaining.remove(n)
                stack.append(n)
    return not remaining


def offset_to_axial(col: int, row: int) -> Hex:
    """Pointy-top "odd-r" offset (odd rows shifted right) to axial."""
    return (col - (row - (row & 1)) // 2, row)


def axial_to_offset(cell: Hex) -> tuple[int, int]:
    """Axial to pointy-top "odd-r" offset (col, row)."""
    q, r = cell
    return (q + (r - (r & 1)) // 2, r)
