"""Giant's Causeway: a move read off a text of the position's legal list.

`parse_action` keeps the action it read off a listed text (as written there) with the
position, and `apply` then takes it as legal (GC-B4..B7, GC-S2..S6: it was listed) and
`format_action` writes it as that text, without writing or checking it again. Over
random games of every rule set, each gives what the plain way gives: the same move
judged, played and written on the same position with nothing kept, and a move not read
so (another text for it, an equal action that is not the one read, another seat)
takes the plain way.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from causeway_position import positions

from engines.base import NotYourTurnError
from engines.causeway import notation
from engines.causeway.engine import CausewayEngine
from engines.registry import get_engine

RULES = ["barrier", "spellstone", "quick"]


@pytest.mark.parametrize("rules", RULES)
def test_a_move_read_off_its_listed_text_is_judged_played_and_written_as_the_plain_way(rules: str) -> None:
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    rng = random.Random(7)
    read = plays = 0
    for state in positions(engine, range(90, 96)):
        if state.phase != "play":
            continue
        plays += 1
        seat = state.to_move
        texts = engine.legal_notation(state, seat)
        for text in rng.sample(texts, min(len(texts), 4)):
            plain = dataclasses.replace(state)  # the same position, nothing kept
            action = engine.parse_action(state, seat, text)
            assert state.memo["read"] == (action, text)
            read += 1
            assert engine._illegal(state, seat, action) is None
            assert engine._illegal(plain, seat, action) is None
            assert engine.format_action(state, action) == text == notation.format_action(action)
            listed, unlisted = engine.apply(state, seat, action), engine.apply(plain, seat, action)
            assert listed.events == unlisted.events
            assert engine.snapshot(listed.state) == engine.snapshot(unlisted.state)
            assert "read" not in listed.state.memo  # kept with its own position only
            # An equal action that is not the one read, and the other seat: the plain way.
            again = notation.parse_action(text)
            assert engine._illegal(state, seat, again) is None
            assert engine.format_action(state, again) == text
            with pytest.raises(NotYourTurnError):
                engine.apply(state, 1 - seat, action)
        # Another text for a listed move (spaces, capitals) is read but not kept.
        text = texts[0]
        kept = state.memo.get("read")
        action = engine.parse_action(state, seat, " " + text.upper() + " ")
        assert state.memo.get("read") is kept
        assert engine.format_action(state, action) == text
        assert engine._illegal(state, seat, action) is None
    assert plays > 100 and read > 400
