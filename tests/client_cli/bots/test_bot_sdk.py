"""The bot SDK: what a bot receives and returns when the SDK runs it, and loading by path."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest

from client_cli.bots import Bot, BotContext, BotError, decide, load_bot_class, make_bot
from client_cli.bots.arena import play_game
from engines import registry
from engines.base import View


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
    assert load_bot_class("random").name == "random"
    path_cls = load_bot_class("engines.bots.greedy:GreedyBot")
    assert path_cls is load_bot_class("greedy")
    bot = make_bot("mcts,iterations=50", context())
    assert bot.iterations == 50  # type: ignore[attr-defined]
    with pytest.raises(BotError, match="unknown bot 'nobody'"):
        load_bot_class("nobody")
    with pytest.raises(BotError, match="cannot import"):
        load_bot_class("no.such.module:Bot")
    with pytest.raises(BotError, match="not a Bot subclass"):
        load_bot_class("engines.bots.base:BotContext")


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
