"""Generic conformance suite: runs on every registered game, rule set and player count.

Random playouts from many seeds check the engine contract of `engines.base`:
- every listed legal action applies, formats and parses back to itself, and
  `legal_notation` is the listed actions formatted, in order;
- actions not listed are rejected with IllegalActionError (for engines whose lists
  are complete), and seats not to act get NotYourTurnError;
- unreadable text raises NotationError;
- apply never mutates its input state;
- without hidden information every seat's view equals the spectator's;
- views (every seat + spectator), events and snapshots are msgpack-able with string
  keys, snapshots round-trip through msgpack to an equal state with equal views;
- with hidden chance, the seed appears in no view or event before the end;
- the same seed and actions replay to the same state;
- every game ends within the engine's declared bound; the outcome is present
  exactly at the end, and no action is accepted after it.
"""

from __future__ import annotations

import contextlib
import random
from typing import Any

import msgpack
import pytest

from engines import (
    Engine,
    GameOverError,
    IllegalActionError,
    NotationError,
    NotYourTurnError,
    all_engines,
)
from engines.base import FixedNotation
from engines.playout import random_playout, replay
from protocol import diff_compact, key_refs, key_table
from tests.protocol.test_compact import exact

# Large seeds, so the "seed never visible" check cannot match an ordinary count.
SEEDS = [987_654_321 + 1_000_003 * k for k in range(6)]


def _cases() -> list[Any]:
    cases = []
    for engine in all_engines():
        info = engine.info
        for players in range(info.min_players, info.max_players + 1):
            cases.append(
                pytest.param(engine, players, id=f"{info.name}-{info.rules}-{players}p")
            )
    return cases


def pack(data: Any) -> bytes:
    return msgpack.packb(data, use_bin_type=True)


def roundtrip(data: Any) -> Any:
    # strict_map_key (the default) rejects non-string keys: clients in any language
    # must be able to read views and snapshots.
    return msgpack.unpackb(pack(data), raw=False)


def contains_value(data: Any, needle: int) -> bool:
    if isinstance(data, bool):
        return False
    if isinstance(data, int):
        return data == needle
    if isinstance(data, str):
        return str(needle) in data  # needles are 9+ digit numbers: no accidental hits
    if isinstance(data, dict):
        return any(contains_value(k, needle) or contains_value(v, needle) for k, v in data.items())
    if isinstance(data, (list, tuple)):
        return any(contains_value(item, needle) for item in data)
    return False


class Checker:
    """Per-step checks hung on `random_playout`'s hook."""

    def __init__(self, engine: Engine, players: int, seed: int) -> None:
        self.engine = engine
        self.players = players
        self.seed = seed
        self.rng = random.Random(seed * 7919 + 1)
        self.pool: list[Any] = []  # actions seen elsewhere: candidates for "not listed"
        self.hidden_seed = engine.info.chance and engine.info.hidden_information
        self.lines = 0  # lists `legal_lines` wrote
        self.written = 0  # diffs `view_ops` wrote

    def check_state(self, state: Any) -> None:
        engine = self.engine
        for seat in [*range(self.players), None]:
            view = engine.view(state, seat)
            assert isinstance(view, dict)
            roundtrip(view)
            if self.hidden_seed and engine.outcome(state) is None:
                assert not contains_value(view, self.seed), f"seed visible to seat {seat}"
        if not engine.info.hidden_information:
            # a room builds one view per change for everyone in these games
            shown = pack(engine.view(state, None))
            assert all(pack(engine.view(state, seat)) == shown for seat in range(self.players))
        if not engine.info.hidden_information and engine.outcome(state) is None:
            # search bots rebuild the position from what a spectator sees
            rebuilt = engine.state_from_view(roundtrip(engine.view(state, None)))
            assert engine.to_act(rebuilt) == engine.to_act(state)
            for seat in engine.to_act(state):
                assert engine.legal_actions(rebuilt, seat) == engine.legal_actions(state, seat)
            assert pack(engine.view(rebuilt, None)) == pack(engine.view(state, None))
        snap = engine.snapshot(state)
        restored = engine.restore(roundtrip(snap))
        assert pack(engine.snapshot(restored)) == pack(snap)
        assert engine.to_act(restored) == engine.to_act(state)
        for seat in [*range(self.players), None]:
            assert pack(engine.view(restored, seat)) == pack(engine.view(state, seat))

    def __call__(self, before: Any, seat: int, action: Any, transition: Any) -> None:
        engine = self.engine
        snap_before = pack(engine.snapshot(before))
        legal = engine.legal_actions(before, seat)
        assert action in legal
        # what a room sends: the notation of every listed action, in order
        notation = engine.legal_notation(before, seat)
        assert notation == [engine.format_action(before, a) for a in legal]
        if engine.plain_notation:  # what it promises the room (server.legal_lists)
            assert len(set(notation)) == len(notation) and not any("\n" in text for text in notation)
        if type(notation) is FixedNotation:  # what it promises the room (server.legal_lists.pack_legal)
            assert notation and 1 <= notation.width <= 31
            assert all(type(text) is str and len(text) == notation.width and text.isascii() for text in notation)
        for asked in range(self.players):  # what `legal_lines` promises the room (server.legal_lists.open_lines)
            lines = engine.legal_lines(before, asked)
            if lines is not None:
                assert engine.lines_notation  # a room asks it only then
                text, width = lines
                listed = engine.legal_notation(before, asked)
                assert listed and 1 <= width <= 31 and text == "".join("\n" + entry for entry in listed)
                assert all(len(entry) == width and entry.isascii() and "\n" not in entry for entry in listed)
                self.lines += 1
        # notation round trip on a sample of the listed actions
        for candidate in [*self.rng.sample(legal, min(len(legal), 8)), action]:
            text = engine.format_action(before, candidate)
            assert isinstance(text, str) and text
            assert engine.parse_action(before, seat, text) == candidate, text
        with pytest.raises(NotationError):
            engine.parse_action(before, seat, "%%not an action%%")
        # unlisted actions
        listed = set(legal)
        strangers = [a for a in self.rng.sample(self.pool, min(len(self.pool), 12)) if a not in listed]
        for stranger in strangers[:4]:
            if engine.info.complete_action_lists:
                with pytest.raises(IllegalActionError):
                    engine.apply(before, seat, stranger)
            else:
                with contextlib.suppress(IllegalActionError):
                    engine.apply(before, seat, stranger)
        # a seat that may not act
        idle = [s for s in range(self.players) if s not in engine.to_act(before)]
        if idle:
            assert all(engine.legal_notation(before, s) == [] for s in idle)
            with pytest.raises(NotYourTurnError):
                engine.apply(before, self.rng.choice(idle), action)
        # events are public plain data and never carry a hidden seed
        for event in transition.events:
            assert isinstance(event, dict) and "type" in event
            roundtrip(event)
            if self.hidden_seed and engine.outcome(transition.state) is None:
                assert not contains_value(event, self.seed)
        # what the server's diff trusts (Engine.view_edits): each edit's value is a list
        # of the new view made from the very list at the same key of the old one, holding
        # its objects everywhere but `at` (ascending); or such a map with str keys, holding
        # the old one's keys and values everywhere but `at` (in the maps' order); or the
        # new view itself, made from the old one so
        edits = engine.view_edits(transition.state)
        if edits:
            assert not engine.info.hidden_information
            old, new = engine.view(before, None), engine.view(transition.state, None)
            for n, (base, value, at) in enumerate(edits, 1):
                if value is new:
                    assert base is old and n == len(edits)  # the view itself: the last edit
                else:
                    keys = [k for k in new if new[k] is value]
                    assert keys and all(old[k] is base for k in keys), keys
                if type(value) is dict:
                    assert type(base) is dict and all(type(k) is str for k in (*base, *value))
                    assert len(set(at)) == len(at)
                    for order in (list(base), list(value)):  # `at` in each map's order
                        named = [k for k in at if k in order]
                        assert named == sorted(named, key=order.index)
                    same = [k for k in base if k not in at]
                    assert [k for k in value if k not in at] == same  # the same keys, in order
                    assert all(value[k] is base[k] for k in same)
                    assert all(vk is bk for vk, bk in zip([k for k in value if k not in at], same, strict=True))
                    continue
                assert list(at) == sorted(set(at))
                assert all(value[i] is base[i] for i in range(min(len(base), len(value))) if i not in at)
        # what the server sends instead of its diff (Engine.view_ops): the very ops of
        # `diff_compact` between the two views as a room's game entry (the room part and
        # outcome unchanged), from the view `before` gave
        refs = key_refs(key_table(engine.view_keys()))
        written = engine.view_ops(transition.state, refs, refs["game"])
        if written is not None:
            assert engine.writes_view_ops and not engine.info.hidden_information  # a room asks it only then
            base, ops = written
            old = engine.view(before, None)
            assert base is old
            room: dict[str, Any] = {}
            new_view = {"room": room, "game": engine.view(transition.state, None), "outcome": None}
            assert exact(ops, diff_compact({"room": room, "game": old, "outcome": None}, new_view, refs))
            self.written += 1
        # purity: the input state is unchanged
        assert pack(engine.snapshot(before)) == snap_before
        self.check_state(transition.state)
        self.pool.extend(self.rng.sample(legal, min(len(legal), 3)))
        del self.pool[:-300]


@pytest.mark.parametrize(("engine", "players"), _cases())
@pytest.mark.parametrize("seed", SEEDS)
def test_random_playout_conforms(engine: Engine, players: int, seed: int) -> None:
    checker = Checker(engine, players, seed)
    first = engine.new_game(players, engine.validate_options(players, {}), seed)
    assert engine.outcome(first) is None
    assert engine.to_act(first)
    checker.check_state(first)
    first_snapshot = pack(engine.snapshot(first))

    result = random_playout(engine, players, seed, on_step=checker)
    final = result.final_state
    # New games may share (read-only) parts with each other: playing one changes
    # neither it nor the next new game.
    assert pack(engine.snapshot(first)) == first_snapshot
    assert pack(engine.snapshot(engine.new_game(players, engine.validate_options(players, {}), seed))) == first_snapshot

    outcome = engine.outcome(final)
    assert outcome is not None and outcome == result.outcome
    assert len(outcome.scores) == players
    assert outcome.winners and set(outcome.winners) <= set(range(players))
    assert outcome.reason
    assert engine.to_act(final) == frozenset()
    for seat in range(players):
        assert engine.legal_actions(final, seat) == []
        assert engine.legal_notation(final, seat) == []
        assert engine.legal_lines(final, seat) is None
        with pytest.raises(GameOverError):
            engine.apply(final, seat, result.log[-1][1])
    roundtrip(outcome.to_data())

    again = replay(engine, players, result.options, seed, result.log)
    assert pack(engine.snapshot(again)) == pack(engine.snapshot(final))
    assert checker.lines > 0 or not engine.lines_notation  # the check above ran
    assert checker.written > 0 or not engine.writes_view_ops  # and so did the ops' one


@pytest.mark.parametrize(("engine", "players"), _cases())
def test_same_seed_same_game(engine: Engine, players: int) -> None:
    a = random_playout(engine, players, seed=99)
    b = random_playout(engine, players, seed=99)
    assert a.log == b.log
    assert pack(engine.snapshot(a.final_state)) == pack(engine.snapshot(b.final_state))


def test_every_game_is_registered_with_metadata() -> None:
    engines = all_engines()
    assert engines, "no engine registered"
    for engine in engines:
        info = engine.info
        assert 1 <= info.min_players <= info.max_players
        assert info.max_plies > 0
        roundtrip(info.describe())
