"""The local arena: bots play each other in-process against the engine.

Each bot gets exactly `engine.view(state, seat)` and its legal actions formatted with
`engine.format_action` — the same two things a bot receives over the protocol — and
nothing else. Seats rotate between games so that every bot plays every seat equally
often. `play_match` returns per-bot totals; `giants arena` prints them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from client_cli.bots.sdk import decide, make_bot
from engines.base import Engine, GameError, Outcome
from engines.bots.base import Bot, BotContext, BotError, StepTracker


@dataclass
class BotRecord:
    """One bot spec's results over a match (a bot in several seats counts once per game)."""

    spec: str
    games: int = 0
    wins: int = 0  # sole winner (or every winner is this bot's seat)
    draws: int = 0  # shared the win with another bot
    losses: int = 0
    score: float = 0.0  # sum of its seats' scores

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def points(self) -> float:
        """Wins plus half the draws, per game: the usual match score."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0


@dataclass
class GameRecord:
    seed: int
    seats: list[str]  # bot spec per seat
    outcome: Outcome
    plies: int
    log: list[tuple[int, str]] = field(default_factory=list)  # (seat, action) in order


@dataclass
class MatchResult:
    game: str
    rules: str
    players: int
    records: dict[str, BotRecord]
    games: list[GameRecord] = field(default_factory=list)
    seconds: float = 0.0


def seating(specs: Sequence[str], players: int, index: int) -> list[str]:
    """Bot spec per seat for game `index`: the bots in turn, rotated by one each game."""
    n = len(specs)
    return [specs[(seat + index) % n] for seat in range(players)]


async def play_game(
    engine: Engine,
    seat_specs: Sequence[str | type[Bot]],
    seed: int,
    options: Mapping[str, Any] | None = None,
    bot_seed: int | None = None,
) -> GameRecord:
    """Play one game to the end; raise BotError if a bot picks an action the engine refuses.

    Each seat gets a bot spec (see `registry.make_bot`) or a Bot subclass.
    """
    players = len(seat_specs)
    resolved = engine.validate_options(players, options or {})
    state = engine.new_game(players, resolved, seed)
    base = seed if bot_seed is None else bot_seed
    bots: list[Bot] = []
    for seat, spec in enumerate(seat_specs):
        context = BotContext(
            game=engine.info.name, rules=engine.info.rules, seat=seat, players=players,
            options=resolved, seed=base * 101 + seat,
        )
        bots.append(spec(context) if isinstance(spec, type) else make_bot(spec, context))
    names = [spec if isinstance(spec, str) else spec.__name__ for spec in seat_specs]
    plies = 0
    log: list[tuple[int, str]] = []
    limit = engine.info.max_plies
    tracker = StepTracker()
    while (outcome := engine.outcome(state)) is None:
        if plies > limit:
            raise BotError(f"game exceeded {limit} plies")
        # In a simultaneous step every seat is asked in turn; a seat's view never
        # shows the others' sealed choices, only that they were made.
        before = engine.to_act(state)
        seat = tracker.next_seat(before)
        view = engine.view(state, seat)
        legal = [engine.format_action(state, a) for a in engine.legal_actions(state, seat)]
        text = await decide(bots[seat], view, legal)
        try:
            state = engine.apply_text(state, seat, text).state
        except GameError as exc:
            raise BotError(
                f"seat {seat} ({names[seat]}) chose {text!r}: [{exc.code}] {exc.message}"
            ) from None
        tracker.acted(seat, before, engine.to_act(state))
        plies += 1
        log.append((seat, text))
    return GameRecord(seed=seed, seats=names, outcome=outcome, plies=plies, log=log)


def play_match(
    engine: Engine,
    specs: Sequence[str],
    games: int,
    players: int | None = None,
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
    on_game: Callable[[int, GameRecord], None] | None = None,
) -> MatchResult:
    """Play `games` games between `specs` (seats rotating) and tally per-bot results."""
    players = players or engine.info.min_players
    labels = unique_labels(specs)
    records = {label: BotRecord(label) for label in labels}
    result = MatchResult(engine.info.name, engine.info.rules, players, records)
    started = time.perf_counter()
    for index in range(games):
        seat_labels = seating(labels, players, index)
        # Consecutive pairs of games share the engine seed, so each deal or draw is
        # played from both sides.
        game_seed = seed + index // len(specs)
        seat_specs = [label.split("#")[0] for label in seat_labels]
        record = asyncio.run(play_game(engine, seat_specs, game_seed, options, seed + index))
        record.seats = seat_labels
        result.games.append(record)
        _tally(records, record)
        if on_game is not None:
            on_game(index, record)
    result.seconds = time.perf_counter() - started
    return result


def unique_labels(specs: Sequence[str]) -> list[str]:
    """The specs, with `#n` appended to repeats so `mcts` vs `mcts` keeps two records."""
    if len(set(specs)) == len(specs):
        return list(specs)
    return [f"{spec}#{i + 1}" for i, spec in enumerate(specs)]


def _tally(records: dict[str, BotRecord], record: GameRecord) -> None:
    winners = {record.seats[s] for s in record.outcome.winners}
    for spec in dict.fromkeys(record.seats):
        rec = records[spec]
        rec.games += 1
        rec.score += sum(
            record.outcome.scores[s] for s, owner in enumerate(record.seats) if owner == spec
        )
        if spec in winners:
            if len(winners) == 1:
                rec.wins += 1
            else:
                rec.draws += 1
        else:
            rec.losses += 1
