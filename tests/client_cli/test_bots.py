"""The bot SDK and bundled bots: what a bot receives, what it may return, how strong it is."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any, ClassVar

import pytest

from client_cli.bots import Bot, BotContext, BotError, decide, load_bot_class, make_bot, parse_spec
from client_cli.bots.arena import play_game, play_match
from engines import registry
from engines.base import View

BOTS_DIR = Path(__file__).resolve().parents[2] / "client_cli" / "bots"
PERFECT_INFORMATION = [
    name for name in ("giantslayer", "causeway", "tara")
    if name in {entry.name for entry in registry.all_games()}
]


class RecordingBot(Bot):
    """Plays randomly and keeps every (view, legal) it was given, and nothing else."""

    seen: ClassVar[list[tuple[int, View, list[str]]]] = []

    def choose(self, view: View, legal: list[str]) -> str:
        RecordingBot.seen.append((self.context.seat, view, list(legal)))
        return self.rng.choice(legal)


class AsyncFirstBot(Bot):
    async def choose(self, view: View, legal: list[str]) -> str:
        await asyncio.sleep(0)
        return legal[0]


def context(game: str = "giantslayer", seat: int = 0, **params: Any) -> BotContext:
    engine = registry.get_engine(game)
    return BotContext(game=game, rules=engine.info.rules, seat=seat,
                      players=engine.info.min_players, seed=1, params=params)


@pytest.mark.parametrize("game", [e.name for e in registry.all_games()])
def test_bots_receive_exactly_their_seats_view_and_formatted_legal_list(game: str) -> None:
    """Every call gets engine.view(state, seat) for the asking seat and the engine's legal
    actions in notation: checked by replaying the game's log move by move."""
    engine = registry.get_engine(game)
    players = engine.info.min_players
    RecordingBot.seen = []
    record = asyncio.run(play_game(engine, [RecordingBot] * players, seed=7))
    assert len(RecordingBot.seen) == len(record.log) == record.plies
    state = engine.new_game(players, engine.validate_options(players, {}), 7)
    for (seat, view, legal), (log_seat, action) in zip(RecordingBot.seen, record.log, strict=True):
        assert seat == log_seat
        assert view == engine.view(state, seat)
        assert legal == [engine.format_action(state, a) for a in engine.legal_actions(state, seat)]
        assert action in legal
        state = engine.apply_text(state, seat, action).state
    assert engine.outcome(state) == record.outcome


def test_bundled_bots_never_touch_hidden_state() -> None:
    """No bot module calls snapshot/restore/new_game (the only ways to reach a full state
    other than a view), and the GIANTS bot does not even rebuild a state from its view."""
    forbidden = {"snapshot", "restore", "new_game", "_state", "lobby"}
    for path in sorted(BOTS_DIR.glob("*.py")):
        if path.name in ("arena.py", "runner.py"):
            continue  # the arena is the referee; the runner only forwards views
        tree = ast.parse(path.read_text())
        used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        assert not used & forbidden, f"{path.name} uses {used & forbidden}"
        if path.name == "islander.py":
            assert "state_from_view" not in used, "GIANTS has hidden state; no rebuilding"


def test_sync_and_async_bots_are_both_awaited() -> None:
    assert asyncio.run(decide(AsyncFirstBot(context()), {}, ["a5-b5", "pass"])) == "a5-b5"
    engine = registry.get_engine("giantslayer")
    record = asyncio.run(play_game(engine, [AsyncFirstBot, "random"], seed=3))
    assert record.outcome is not None


def test_bot_returning_a_non_string_is_reported() -> None:
    class Broken(Bot):
        def choose(self, view: View, legal: list[str]) -> str:
            return 42  # type: ignore[return-value]

    with pytest.raises(BotError, match="not str"):
        asyncio.run(decide(Broken(context()), {}, ["pass"]))


def test_illegal_choice_names_the_bot_and_the_engine_error() -> None:
    class Cheater(Bot):
        def choose(self, view: View, legal: list[str]) -> str:
            return "e5-e6"  # the impassable centre

    engine = registry.get_engine("giantslayer")
    with pytest.raises(BotError, match=r"seat 0 \(Cheater\) chose 'e5-e6': \[illegal_action\]"):
        asyncio.run(play_game(engine, [Cheater, "random"], seed=1))


def test_registry_loads_bundled_names_and_module_paths_with_parameters() -> None:
    assert parse_spec("mcts,iterations=50,c=0.7") == ("mcts", {"iterations": "50", "c": "0.7"})
    assert load_bot_class("random").name == "random"
    path_cls = load_bot_class("client_cli.bots.greedy:GreedyBot")
    assert path_cls is load_bot_class("greedy")
    bot = make_bot("mcts,iterations=50", context())
    assert bot.iterations == 50  # type: ignore[attr-defined]
    with pytest.raises(BotError, match="unknown bot 'nobody'"):
        load_bot_class("nobody")
    with pytest.raises(BotError, match="cannot import"):
        load_bot_class("no.such.module:Bot")
    with pytest.raises(BotError, match="not a Bot subclass"):
        load_bot_class("client_cli.bots.base:BotContext")
    with pytest.raises(BotError, match="key=value"):
        parse_spec("mcts,fast")


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


def test_simultaneous_bids_ask_each_seat_once_per_step() -> None:
    """GI-8: during the sealed auction every seat is asked once (a seat that has bid is
    still listed to act, since bids may be replaced, but it is not asked again)."""
    engine = registry.get_engine("giants")
    RecordingBot.seen = []
    record = asyncio.run(play_game(engine, [RecordingBot] * 3, seed=2))
    first_auction = []
    for seat, view, _ in RecordingBot.seen:
        if view["phase"] != "auction":
            break
        first_auction.append(seat)
    assert sorted(first_auction) == [0, 1, 2]
    assert record.outcome is not None


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


def test_threaded_decide_keeps_the_event_loop_running_while_a_bot_thinks() -> None:
    """A synchronous bot that blocks until the loop releases it: with threaded=True the
    loop runs meanwhile (what a server running bots in-process needs)."""
    import threading

    class Waiter(Bot):
        def setup(self) -> None:
            self.release = threading.Event()

        def choose(self, view: View, legal: list[str]) -> str:
            assert self.release.wait(10), "the event loop was blocked"
            return legal[0]

    async def main() -> str:
        bot = Waiter(context())
        task = asyncio.create_task(decide(bot, {}, ["pass"], threaded=True))
        await asyncio.sleep(0.01)  # the loop is free: release the thinking bot
        bot.release.set()
        return await task

    assert asyncio.run(main()) == "pass"
