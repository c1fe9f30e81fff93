"""The island data file (GI map section) and the dice (GI-5 … GI-7)."""

from __future__ import annotations

import copy
import json
from importlib import resources

import pytest

from engines.giants import dice
from engines.giants.board import ISLAND, MapError, load_island

RAW = json.loads(resources.files("engines.giants").joinpath("map.json").read_text())


def spec_neighbours(col: int, row: int) -> set[tuple[int, int]]:
    """The odd-r rule exactly as the spec writes it (independent of hexgrid)."""
    if row % 2 == 0:
        cells = [(col + 1, row), (col - 1, row), (col, row - 1), (col - 1, row - 1),
                 (col, row + 1), (col - 1, row + 1)]
    else:
        cells = [(col + 1, row), (col - 1, row), (col + 1, row - 1), (col, row - 1),
                 (col + 1, row + 1), (col, row + 1)]
    return set(cells)


def test_map_counts_match_the_spec() -> None:
    assert len(ISLAND.land) == 76
    assert len(ISLAND.ahu) == 20
    assert len(ISLAND.forests) == 7 and sum(ISLAND.forests.values()) == 27
    rows = {0: (4, 8), 1: (2, 10), 2: (1, 11), 3: (0, 12), 4: (0, 12), 5: (1, 11),
            6: (2, 10), 7: (4, 8)}
    expected = {(c, r) for r, (a, b) in rows.items() for c in range(a, b + 1)}
    assert ISLAND.land == expected
    assert (ISLAND.quarry, ISLAND.clay_pit, ISLAND.village, ISLAND.hut) == (
        (12, 4), (0, 3), (1, 4), (6, 1))


def test_every_ahu_adjacency_is_adjacent_by_the_odd_r_rule() -> None:
    for ahu in ISLAND.ahu:
        assert ahu.hex not in ISLAND.land
        for cell in ahu.adjacent:
            assert cell in ISLAND.land and cell in spec_neighbours(*ahu.hex), (ahu.id, cell)


def test_land_neighbours_follow_the_spec_rule() -> None:
    for cell in ISLAND.land:
        assert set(ISLAND.neighbors[cell]) == spec_neighbours(*cell) & ISLAND.land


def test_ahu_values_from_the_table() -> None:
    a01, a10, a20 = (ISLAND.ahu_by_id[k] for k in ("A01", "A10", "A20"))
    assert (a01.moai_value, a01.headdress_value) == (5, 1)
    assert (a10.moai_value, a10.headdress_value, a10.adjacent) == (1, 3, ((11, 2), (12, 3), (11, 3)))
    assert a20.adjacent == ((1, 5), (1, 4), (0, 4))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["ahu"][0]["adjacent"].append([5, 5]), "not a land hex adjacent"),
        (lambda d: d["land"].pop(), "76 land"),
        (lambda d: d["forests"][0].update(logs=7), "27 logs"),
        (lambda d: d["ahu"].pop(), "20 Ahu"),
        (lambda d: d.update(quarry=[20, 20]), "not a land hex"),
    ],
)
def test_a_broken_map_is_refused_at_load(change, message) -> None:  # type: ignore[no-untyped-def]
    data = copy.deepcopy(RAW)
    change(data)
    with pytest.raises(MapError, match=message):
        load_island(data)


def test_a_valid_replacement_map_loads_without_code_changes() -> None:
    data = copy.deepcopy(RAW)
    data["ahu"][0]["moai"] = 4  # a transcription with other values
    assert load_island(data).ahu_by_id["A01"].moai_value == 4


def test_gi5_dice_count_and_faces() -> None:
    assert [dice.dice_count(n) for n in (2, 3, 4, 5)] == [3, 3, 4, 5]
    faces = {f for t in range(1, 40) for f in dice.roll(777, t, 5)}
    assert faces == {0, 1, 2, 3}
    assert dice.roll(777, 3, 4) == dice.roll(777, 3, 4)
    assert dice.roll(777, 3, 4) != dice.roll(778, 3, 4) or dice.roll(777, 4, 4) != dice.roll(778, 4, 4)


def test_gi7_turn_one_counts_0_as_1_and_3_as_2() -> None:
    assert dice.moai_sizes([0, 3, 2], 1) == [1, 2, 2]
    assert dice.moai_sizes([0, 3, 2], 2) == [3, 2]


def test_gi6_commitment_is_the_documented_sha256() -> None:
    import hashlib

    assert dice.commitment(42) == hashlib.sha256(b"giants-seed:42").hexdigest()
    assert dice.first_player(42, 4) in range(4)
