"""The boards' data files are the engines' own data (no browser needed)."""

from __future__ import annotations

import json
from pathlib import Path

from server import web

ROOT = Path(__file__).resolve().parents[2]


def test_giants_map_shipped_to_the_page_is_the_engines_map() -> None:
    # The board draws the island from boards/giants-map.json; the engine plays on
    # engines/giants/map.json. A changed map must change both (GI map section).
    shipped = json.loads((web.STATIC_ROOT / "boards" / "giants-map.json").read_text(encoding="utf-8"))
    engine = json.loads((ROOT / "engines" / "giants" / "map.json").read_text(encoding="utf-8"))
    assert shipped == engine


def test_every_board_module_is_served() -> None:
    for name in ("index.js", "ui.js", "picker.js", "giantslayer.js", "causeway.js", "tara.js",
                 "giants.js", "giants-panels.js", "giants-data.js", "giants-map.json", "boards.css"):
        found = web.lookup(f"/boards/{name}")
        assert found is not None, name
