"""The bundled bots as policies: what they read, what they answer, how strong they are."""

from __future__ import annotations

import ast
import threading
from pathlib import Path
from typing import Any

import pytest

from client_cli.bots.arena import play_match
from engines import registry
from engines.bots import BotContext, BotError, make_bot

BOTS_DIR = Path(__file__).resolve().parents[3] / "engines" / "bots"
PERFECT_INFORMATION = [
    name for name in ("giantslayer", "causeway", "tara")
    if name in {entry.name for entry in registry.all_games()}
]


def context(game: str = "giantslayer", seat: int = 0, **params: Any) -> BotContext:
    engine = registry.get_engine(game)
    return BotContext(game=game, rules=engine.info.rules, seat=seat,
                      players=engine.info.min_players, seed=1, params=params)


def test_bundled_bots_never_touch_hidden_state() -> None:
    """No bot module calls snapshot/restore/new_game (the only ways to reach a full state
    other than a view), and the GIANTS bot does not even rebuild a state from its view."""
    forbidden = {"snapshot", "restore", "new_game", "_state", "lobby"}
    for path in sorted(BOTS_DIR.glob("*.py")):
        tree = ast.parse(path.read_text())
        used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        assert not used & forbidden, f"{path.name} uses {used & forbidden}"
        if path.name == "islander.py":
            assert "state_from_view" not in used, "GIANTS has hidden state; no rebuilding"


@pytest.mark.parametrize("game", PERFECT_INFORMATION)
def test_mcts_and_greedy_return_a_legal_action_from_the_view(game: str) -> None:
    engine = registry.get_engine(game)
    state = engine.new_game(engine.info.min_players, engine.validate_options(engine.info.min_players, {}), 5)
    seat = min(engine.to_act(state))
    view = engine.view(state, seat)
    legal = [engine.format_action(state, a) for a in engine.legal_actions(state, seat)]
    for spec in ("greedy", "mcts,iterations=40"):
        bot = make_bot(spec, context(game, seat))
        assert bot.choose(view, legal) in legal


# Short matches keep the suite fast: one round / one game, fewer games where moves are many.
SHORT = {"giantslayer": ({"rounds": 1}, 6), "tara": ({"games": 1}, 6), "causeway": ({}, 4)}


@pytest.mark.parametrize("game", PERFECT_INFORMATION)
def test_mcts_beats_random(game: str) -> None:
    """Statistical, with fixed seeds, seats alternating: a small-budget MCTS must score
    at least 75% of the points and win all but at most two games more than it loses."""
    engine = registry.get_engine(game)
    options, games = SHORT[game]
    result = play_match(engine, ["mcts,iterations=60", "random"], games=games, options=options, seed=11)
    mcts = result.records["mcts,iterations=60"]
    assert mcts.points >= 0.75, mcts
    assert mcts.wins - mcts.losses >= games - 2, mcts


@pytest.mark.parametrize("game", PERFECT_INFORMATION)
def test_greedy_beats_random(game: str) -> None:
    engine = registry.get_engine(game)
    result = play_match(engine, ["greedy", "random"], games=6, seed=21)
    greedy = result.records["greedy"]
    assert greedy.points >= 0.75, greedy


def test_islander_beats_random_at_giants_using_only_its_view() -> None:
    """GIANTS (hidden information): the islander bot wins clearly against two random
    players, seats rotating, from its own views and legal lists only."""
    engine = registry.get_engine("giants")
    result = play_match(engine, ["islander", "random", "random"], games=6, players=3, seed=4)
    islander = result.records["islander#1"]
    assert islander.wins >= 5, islander
    assert islander.score > 3 * max(r.score for label, r in result.records.items() if label != "islander#1")


def test_mcts_refuses_giants() -> None:
    with pytest.raises(BotError, match="does not play giants"):
        make_bot("mcts", context("giants"))


def test_mcts_time_budget_runs_at_least_one_iteration() -> None:
    engine = registry.get_engine("tara")
    state = engine.new_game(2, engine.validate_options(2, {}), 3)
    seat = min(engine.to_act(state))
    legal = [engine.format_action(state, a) for a in engine.legal_actions(state, seat)]
    bot = make_bot("mcts,ms=30", context("tara", seat))
    assert bot.choose(engine.view(state, seat), legal) in legal
    assert bot.last_iterations >= 1  # type: ignore[attr-defined]


def test_bots_use_no_global_random() -> None:
    """Each bot owns its Random (`self.rng`): no module-level random calls, so one bot's
    play can never be steered by, or steer, another seat's or the engine's chance."""
    for path in sorted(BOTS_DIR.glob("*.py")):
        tree = ast.parse(path.read_text())
        calls = {
            node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "random"
        }
        assert calls <= {"Random"}, f"{path.name} calls random.{calls - {'Random'}}"


@pytest.mark.parametrize("spec,game", [
    ("mcts,iterations=1000000000000", "tara"),
    ("mcts,iterations=1000000000000,order_all=1", "causeway"),
    ("greedy", "giantslayer"),
    ("islander", "giants"),
])
def test_a_stopped_bot_answers_at_once_with_a_legal_action(spec: str, game: str) -> None:
    """Cooperative cancellation: once `should_stop` is true, even a search of 10**12
    iterations returns a legal action (the best so far) instead of running on."""
    engine = registry.get_engine(game)
    players = engine.info.min_players
    state = engine.new_game(players, engine.validate_options(players, {}), 9)
    seat = min(engine.to_act(state))
    legal = [engine.format_action(state, a) for a in engine.legal_actions(state, seat)]
    bot = make_bot(spec, context(game, seat))
    stop = threading.Event()
    calls = 0

    def should_stop() -> bool:
        nonlocal calls
        calls += 1
        if calls >= 50:
            stop.set()  # the caller's budget runs out part-way through the search
        return stop.is_set()

    bot.should_stop = should_stop
    assert bot.choose(engine.view(state, seat), legal) in legal
    assert stop.is_set() or calls < 50
