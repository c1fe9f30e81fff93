"""`giants arena`: seats rotate fairly, results are tallied per bot, the CLI reports them."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from client_cli.bots.arena import play_match, seating, unique_labels
from client_cli.cli import main
from engines import registry


def test_seating_rotates_so_every_bot_plays_every_seat_equally() -> None:
    seats = [tuple(seating(["a", "b"], 2, i)) for i in range(4)]
    assert seats == [("a", "b"), ("b", "a"), ("a", "b"), ("b", "a")]
    three = Counter((seat, bot) for i in range(6) for seat, bot in enumerate(seating(["a", "b", "c"], 3, i)))
    assert set(three.values()) == {2}


def test_same_bot_twice_keeps_two_records() -> None:
    assert unique_labels(["random", "random"]) == ["random#1", "random#2"]
    engine = registry.get_engine("giantslayer")
    result = play_match(engine, ["random", "random"], games=2, options={"rounds": 1}, seed=3)
    assert set(result.records) == {"random#1", "random#2"}
    for record in result.records.values():
        assert record.games == 2
        assert record.wins + record.draws + record.losses == 2


def test_match_tallies_agree_with_each_game_outcome() -> None:
    engine = registry.get_engine("tara")
    result = play_match(engine, ["greedy", "random"], games=4, seed=5)
    assert len(result.games) == 4
    wins = Counter(
        game.seats[game.outcome.winners[0]] for game in result.games if not game.outcome.is_draw
    )
    for label, record in result.records.items():
        assert record.wins == wins[label]
        assert record.games == 4
    # Games 0/1 and 2/3 share a seed, so each deal is played from both sides.
    assert [g.seed for g in result.games] == [5, 5, 6, 6]
    assert result.games[0].seats == ["greedy", "random"]
    assert result.games[1].seats == ["random", "greedy"]


def test_cli_prints_win_rates(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["arena", "giantslayer", "greedy", "random", "--games", "2", "--option", "rounds=1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "giantslayer/standard, 2 players, 2 games" in out
    assert "win rate" in out
    lines = {line.split()[0]: line.split() for line in out.splitlines()[2:]}
    assert set(lines) == {"greedy", "random"}
    assert int(lines["greedy"][1]) + int(lines["random"][1]) <= 2


def test_cli_reports_unknown_bot_and_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "giantslayer", "genius", "random", "--games", "1"]) == 2
    assert "unknown bot 'genius'" in capsys.readouterr().err
    assert main(["arena", "chess", "random", "random"]) == 2
    assert "[unknown_game]" in capsys.readouterr().err


def test_cli_loads_a_bot_from_a_module_path(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["arena", "tara", "engines.bots.random_bot:RandomBot,", "greedy", "--games", "2"])
    assert code == 2  # a trailing comma is an empty parameter: refused clearly
    assert "key=value" in capsys.readouterr().err
    assert main(["arena", "tara", "engines.bots.random_bot:RandomBot", "greedy", "--games", "2"]) == 0
    assert "engines.bots.random_bot:RandomBot" in capsys.readouterr().out


def test_a_bot_module_in_the_working_directory_loads_by_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/bots.md's first bot, written outside the package, plays from its module path."""
    package = tmp_path / "mybots"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "first.py").write_text(
        "from client_cli.bots import Bot\n\n\n"
        "class FirstBot(Bot):\n"
        "    def choose(self, view, legal):\n"
        "        return legal[0]\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    assert main(["arena", "tara", "mybots.first:FirstBot", "random", "--games", "2"]) == 0
    assert "mybots.first:FirstBot" in capsys.readouterr().out
