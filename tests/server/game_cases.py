"""Shared by the tests that play every registered game: one case per game, rule set
and player count (the fewest and the most), and msgpack's view of a value."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

from engines import registry

CASES = [
    pytest.param(engine.info.name, engine.info.rules, players, id=f"{engine.info.name}-{engine.info.rules}-{players}p")
    for engine in registry.all_engines()
    for players in sorted({engine.info.min_players, engine.info.max_players})
]


def plain(data: Any) -> Any:
    """`data` as a client decodes it (tuples become lists)."""
    return msgpack.unpackb(msgpack.packb(data, use_bin_type=True), raw=False)
