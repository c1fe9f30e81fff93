"""The GIANTS island: loaded from `map.json` and checked when this module is imported.

The map is data (GI map section of the spec) so a transcription of the real board can
replace `map.json` without code changes. Hexes are pointy-top "odd-r" offset
coordinates (col, row) everywhere in this package, in views and in notation; odd rows
are shifted half a hex right. `engines.hexgrid` converts to axial when needed.

Importing this module raises `MapError` if the file is inconsistent (wrong counts,
an Ahu "adjacency" that is not adjacent, a special hex off the land, ...).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from engines import hexgrid

Hex = tuple[int, int]

LAND_COUNT = 76
AHU_COUNT = 20
LOG_COUNT = 27
FOREST_COUNT = 7


class MapError(ValueError):
    """map.json does not describe a playable island; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class Ahu:
    """One Ahu: a sea hex beside the coast with its values and the land next to it."""

    id: str
    hex: Hex
    adjacent: tuple[Hex, ...]
    moai_value: int
    headdress_value: int


def odd_r_neighbors(cell: Hex) -> list[Hex]:
    """The six neighbours of (col, row) by the odd-r rule (via axial coordinates)."""
    axial = hexgrid.offset_to_axial(*cell)
    return [hexgrid.axial_to_offset(n) for n in hexgrid.neighbors(axial)]


def format_hex(cell: Hex) -> str:
    """`(c,r)`: the form used in notation."""
    return f"({cell[0]},{cell[1]})"


def hex_key(cell: Hex) -> str:
    """`c,r`: the form used as a string key in views and snapshots."""
    return f"{cell[0]},{cell[1]}"


def key_hex(key: str) -> Hex:
    col, row = key.split(",")
    return (int(col), int(row))


# ASCII digits only ([0-9], not \d: that also matches other scripts' digits).
_HEX_RE = re.compile(r"^\(\s*(-?[0-9]{1,4})\s*,\s*(-?[0-9]{1,4})\s*\)$")


def parse_hex(text: str) -> Hex | None:
    """Read `(c,r)`; None if the text is not a hex (the caller raises NotationError)."""
    match = _HEX_RE.match(text.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def _pair(value: Any, what: str) -> Hex:
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value)):
        raise MapError(f"{what}: expected [col, row], got {value!r}")
    return (value[0], value[1])


@dataclass(frozen=True)
class Island:
    """The validated map: land, special hexes, forests with logs, Ahu."""

    land: frozenset[Hex]
    land_order: tuple[Hex, ...]  # sorted by (row, col): the stable listing order
    neighbors: dict[Hex, tuple[Hex, ...]]  # land neighbours of each land hex
    quarry: Hex
    clay_pit: Hex
    village: Hex
    hut: Hex
    forests: dict[Hex, int]
    ahu: tuple[Ahu, ...]
    ahu_by_id: dict[str, Ahu]
    ahu_near: dict[Hex, tuple[str, ...]]  # land hex -> Ahu ids adjacent to it


def load_island(data: dict[str, Any]) -> Island:
    """Build and validate an Island from map.json data; raise MapError if inconsistent."""
    land_list = [_pair(v, "land") for v in data["land"]]
    land = frozenset(land_list)
    if len(land) != len(land_list):
        raise MapError("land lists a hex twice")
    if len(land) != LAND_COUNT:
        raise MapError(f"expected {LAND_COUNT} land hexes, got {len(land)}")
    specials = {}
    for name in ("quarry", "clay_pit", "village", "hut"):
        cell = _pair(data[name], name)
        if cell not in land:
            raise MapError(f"{name} {cell} is not a land hex")
        specials[name] = cell
    if len(set(specials.values())) != len(specials):
        raise MapError("two special hexes share a hex")
    forests: dict[Hex, int] = {}
    for entry in data["forests"]:
        cell = _pair(entry["hex"], "forest")
        if cell not in land or cell in forests or cell in specials.values():
            raise MapError(f"forest {cell} is off the land, repeated or on a special hex")
        if not isinstance(entry["logs"], int) or entry["logs"] < 1:
            raise MapError(f"forest {cell} needs a positive log count")
        forests[cell] = entry["logs"]
    if len(forests) != FOREST_COUNT or sum(forests.values()) != LOG_COUNT:
        raise MapError(f"expected {LOG_COUNT} logs on {FOREST_COUNT} forests")
    ahus: list[Ahu] = []
    for entry in data["ahu"]:
        cell = _pair(entry["hex"], "ahu")
        if cell in land:
            raise MapError(f"Ahu {entry['id']} at {cell} is on land; Ahu stand in the sea")
        adjacent = tuple(_pair(v, f"Ahu {entry['id']} adjacency") for v in entry["adjacent"])
        real = set(odd_r_neighbors(cell))
        for adj in adjacent:
            if adj not in land or adj not in real:
                raise MapError(f"Ahu {entry['id']}: {adj} is not a land hex adjacent to {cell}")
        if not adjacent:
            raise MapError(f"Ahu {entry['id']} touches no land")
        if not (1 <= entry["moai"] <= 9 and 0 <= entry["headdress"] <= 9):
            raise MapError(f"Ahu {entry['id']} has odd values")
        ahus.append(Ahu(str(entry["id"]), cell, adjacent, entry["moai"], entry["headdress"]))
    ids = [a.id for a in ahus]
    if len(ahus) != AHU_COUNT or len(set(ids)) != len(ids) or len({a.hex for a in ahus}) != len(ahus):
        raise MapError(f"expected {AHU_COUNT} Ahu with distinct ids and hexes")
    neighbors = {
        cell: tuple(n for n in odd_r_neighbors(cell) if n in land) for cell in land
    }
    if not hexgrid.is_connected(hexgrid.offset_to_axial(*c) for c in land):
        raise MapError("the land is not one connected island")
    near: dict[Hex, list[str]] = {}
    for ahu in ahus:
        for adj in ahu.adjacent:
            near.setdefault(adj, []).append(ahu.id)
    return Island(
        land=land,
        land_order=tuple(sorted(land, key=lambda c: (c[1], c[0]))),
        neighbors=neighbors,
        quarry=specials["quarry"],
        clay_pit=specials["clay_pit"],
        village=specials["village"],
        hut=specials["hut"],
        forests=forests,
        ahu=tuple(ahus),
        ahu_by_id={a.id: a for a in ahus},
        ahu_near={cell: tuple(v) for cell, v in near.items()},
    )


def _load_default() -> Island:
    text = resources.files("engines.giants").joinpath("map.json").read_text(encoding="utf-8")
    return load_island(json.loads(text))


ISLAND = _load_default()
