"""Setup (GI-1 … GI-4) and the action notation documented in docs/rules/giants.md."""

from __future__ import annotations

import pytest
from giants_builders import ENGINE, fresh

from engines import BadOptionsError, NotationError
from engines.giants.actions import (
    Action,
    Claim,
    Crown,
    Erect,
    Look,
    Mark,
    Neutral,
    Pass,
    Place,
    Power,
    Release,
    Tablet,
    Transport,
    format_action,
    parse_action,
)
from engines.giants.state import Bid


@pytest.mark.parametrize(
    ("players", "workers", "markers", "bases", "neutrals"),
    [(2, 2, 3, 7, 6), (3, 1, 2, 6, 0), (4, 1, 2, 5, 0), (5, 1, 2, 5, 0)],
)
def test_gi2_gi3_gi4_setup(players: int, workers: int, markers: int, bases: int,
                          neutrals: int) -> None:
    state = fresh(players)
    for p in state.seats:
        assert (p.workers, p.markers, p.bases, p.chief, p.sorcerer) == (
            workers, markers, bases, True, True)
        assert p.reserve_workers == 6 - workers and p.reserve_markers == 6 - markers
    assert state.neutrals == neutrals
    assert (state.tablets, state.headdresses) == (30, 14)
    assert [s + o for s, o in zip(state.stock, state.offer, strict=True)] == [17, 12, 6]
    assert sum(state.forests.values()) == 27


def test_gi1_player_counts() -> None:
    for bad in (1, 6):
        with pytest.raises(BadOptionsError):
            ENGINE.new_game(bad, {}, 1)


EXAMPLES = [
    ("bid 2 w2 c", Bid(2, 2, True)),
    ("bid 0", Bid(0, 0, False)),
    ("claim 3 chief", Claim(3, True)),
    ("claim 2 workers", Claim(2, False)),
    ("place worker (5,3) logs 1", Place("worker", (5, 3), 1)),
    ("place sorcerer (0,4) logs 0", Place("sorcerer", (0, 4), 0)),
    ("place chief (12,4)", Place("chief", (12, 4), 0)),
    ("sorcerer village", Power("sorcerer", "village", (1, 4))),
    ("chief hut", Power("chief", "hut", (6, 1))),
    ("sorcerer clay", Power("sorcerer", "clay", (0, 3))),
    ("sorcerer forest (6,4)", Power("sorcerer", "forest", (6, 4))),
    ("sorcerer reserve A05 (6,0)", Power("sorcerer", "reserve", (6, 0), "A05")),
    ("tablet", Tablet()),
    ("neutral (5,3)", Neutral(None, (5, 3))),
    ("neutral (5,3)>(6,3)", Neutral((5, 3), (6, 3))),
    ("transport M7 (12,4)>(11,4)>(10,4)", Transport("M7", ((12, 4), (11, 4), (10, 4)))),
    ("transport M7 (12,4)>(11,4)=w1+l>(10,4)",
     Transport("M7", ((12, 4), (11, 4), (10, 4)), (("w1", "l"), None))),
    ("erect M7 A10", Erect("M7", "A10")),
    ("headdress H3 A10", Crown("H3", "A10")),
    ("mark M3", Mark("M3")),
    ("look A05", Look("A05")),
    ("release M3", Release("M3")),
    ("pass", Pass()),
]


@pytest.mark.parametrize(("text", "action"), EXAMPLES)
def test_notation_reads_and_writes_every_action(text: str, action: Action) -> None:
    assert parse_action(text) == action
    assert format_action(action) == text


@pytest.mark.parametrize(
    "text",
    ["", "bid", "bid x", "bid 1 w2 w3", "claim 2", "place worker (5,3)", "place king (1,1)",
     "sorcerer forest", "transport M7 (12,4)", "transport M7 (12,4)>(11,4)=x9", "erect A10",
     "look 5", "mark (5,3)", "neutral", "fly away"],
)
def test_unreadable_text_is_a_notation_error(text: str) -> None:
    with pytest.raises(NotationError):
        parse_action(text)


# Numbers in the notation are ASCII digits only. Other characters that Python calls
# digits ("²", "①") or reads as numbers ("٣", "𝟙") are a notation error like any
# other unreadable text, never a crash (`int("²")` raises ValueError).
@pytest.mark.parametrize(
    ("rule", "text"),
    [
        ("GI-8", "bid ²"),
        ("GI-8", "bid ٣"),
        ("GI-8", "bid 1 w²"),
        ("GI-8", "bid 1 w٢ c"),
        ("GI-8", "bid 99999999999999999999"),
        ("GI-10", "claim 2① workers"),
        ("GI-10", "claim ³ chief"),
        ("GI-12", "place worker (5,3) logs ³"),
        ("GI-12", "place worker (٥,3) logs 1"),
        ("GI-12", "place chief (𝟙,3)"),
        ("GI-13", "sorcerer forest (6,٤)"),
        ("GI-13", "sorcerer reserve A٠5 (6,0)"),
        ("GI-16", "neutral (5,3)>(6,³)"),
        ("GI-18", "transport M7 (12,4)>(11,4)=w¹"),
        ("GI-18", "transport M٧ (12,4)>(11,4)"),
        ("GI-20", "erect M7 A1٠"),
        ("GI-22", "mark M²"),
        ("GI-23", "look A①②"),
    ],
)
def test_non_ascii_digits_are_notation_errors(rule: str, text: str) -> None:
    with pytest.raises(NotationError):
        parse_action(text)


@pytest.mark.parametrize(("rule", "text", "action"), [
    ("GI-8", "BID 3 W1 C", Bid(3, 1, True)),
    ("GI-12", "PLACE WORKER (5,3) LOGS 2", Place("worker", (5, 3), 2)),
])
def test_ascii_notation_still_reads(rule: str, text: str, action: Action) -> None:
    assert parse_action(text) == action
