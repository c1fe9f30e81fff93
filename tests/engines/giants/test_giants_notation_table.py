"""Notation both ways from a table made once (`actions._KNOWN`): bids, claims,
placements, powers, neutral workers from beside the board, tablet, pass (GI-8, GI-10,
GI-12 … GI-17) — the table against the reader and writer written out in full
(`_parse`, `_format`), and in random games (fixed seeds)."""

from __future__ import annotations

import dataclasses
import random

import pytest
from giants_builders import ENGINE

from engines.giants import actions
from engines.giants.actions import _format, _parse, format_action, parse_action


def test_every_table_entry_is_what_the_reader_reads_and_the_writer_writes() -> None:
    assert len(actions._KNOWN) > 800
    for text, action in actions._KNOWN.items():
        read = _parse(text)
        assert read == action and type(read) is type(action), text
        assert _format(action) == text and format_action(action) == text
        assert parse_action(text) is action
        # An equal object that is not the table's is written out in full, the same.
        if dataclasses.fields(action):  # type: ignore[arg-type]
            twin = dataclasses.replace(action)  # type: ignore[type-var]
            assert twin is not action and format_action(twin) == text


@pytest.mark.parametrize(("players", "seed"), [(2, 6), (4, 1)])
def test_random_games_read_and_write_as_in_full(players: int, seed: int) -> None:
    """Every listed action's text, and what a room does with one (parse it, format it),
    equal the full reader's and writer's; texts in other spellings are read in full."""
    rng = random.Random(seed)
    state = ENGINE.new_game(players, {}, seed)
    hits = 0
    while ENGINE.outcome(state) is None:
        seat = rng.choice(sorted(ENGINE.to_act(state)))
        legal = ENGINE.legal_actions(state, seat)
        for action in legal:
            text = format_action(action)
            assert text == _format(action)
            assert parse_action(text) == _parse(text) == action
            assert parse_action(text.upper() + " ") == action  # not in the table: read in full
        action = rng.choice(legal)
        parsed = parse_action(format_action(action))
        hits += parsed is actions._KNOWN.get(format_action(action))
        state = ENGINE.apply(state, seat, parsed).state
    assert hits > 50
