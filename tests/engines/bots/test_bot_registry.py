"""The bundled-bot registry: names, parameters, and nothing but bundled bots."""

from __future__ import annotations

import pytest

from engines import registry
from engines.bots import BUNDLED, BotContext, BotError, bundled_class, make_bot, parse_spec


def context(game: str = "giantslayer", seat: int = 0) -> BotContext:
    engine = registry.get_engine(game)
    return BotContext(game=game, rules=engine.info.rules, seat=seat, players=engine.info.min_players, seed=1)


def test_specs_split_into_a_name_and_text_parameters() -> None:
    assert parse_spec("mcts,iterations=50,c=0.7") == ("mcts", {"iterations": "50", "c": "0.7"})
    assert parse_spec(" random ") == ("random", {})
    with pytest.raises(BotError, match="key=value"):
        parse_spec("mcts,fast")
    with pytest.raises(BotError, match="empty bot name"):
        parse_spec(",a=1")


def test_every_bundled_name_resolves_to_its_bot() -> None:
    for name in BUNDLED:
        assert bundled_class(name).name == name


def test_parameters_reach_the_bot_and_bad_ones_are_refused() -> None:
    bot = make_bot("mcts,iterations=50", context())
    assert bot.iterations == 50  # type: ignore[attr-defined]
    with pytest.raises(BotError, match="iterations='many'"):
        make_bot("mcts,iterations=many", context())


def test_module_paths_are_not_bots_here() -> None:
    """The server builds bots from specs a client sent: only bundled names resolve, so
    no spec can make it import a module."""
    with pytest.raises(BotError, match="unknown bot"):
        make_bot("engines.bots.greedy:GreedyBot", context())
    with pytest.raises(BotError, match="unknown bot 'os'"):
        make_bot("os", context())


def test_a_bot_refuses_a_game_it_does_not_play() -> None:
    with pytest.raises(BotError, match="does not play giants"):
        make_bot("mcts", context("giants"))
