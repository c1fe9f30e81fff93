"""`greedy`: one ply of look-ahead with the game's heuristic.

For each legal action the bot rebuilds the position from its own view
(`engine.state_from_view`), applies the action, and scores the result: a finished
game by its outcome, otherwise by `heuristics.evaluate`. Ties break at random. In a
game with hidden information (GIANTS) it cannot rebuild a position, so it plays the
`islander` bot's action heuristics instead.
"""

from __future__ import annotations

from engines.base import View
from engines.bots.base import Bot
from engines.bots.heuristics import evaluate, outcome_values


class GreedyBot(Bot):
    name = "greedy"
    description = "one-ply look-ahead with a per-game heuristic"

    def setup(self) -> None:
        self.engine = self.context.engine()
        self.fallback: Bot | None = None
        if self.engine.info.hidden_information:
            from engines.bots.islander import IslanderBot

            self.fallback = IslanderBot(self.context)

    def choose(self, view: View, legal: list[str]) -> str:
        if self.fallback is not None:
            self.fallback.should_stop = self.should_stop
            choice = self.fallback.choose(view, legal)
            assert isinstance(choice, str)
            return choice
        engine, seat = self.engine, self.context.seat
        players = self.context.players
        state = engine.state_from_view(view)
        best: list[str] = []
        best_value = -1.0
        for text in legal:
            if best and self.stopped():
                break  # out of time: the best action seen so far
            after = engine.apply(state, seat, engine.parse_action(state, seat, text)).state
            outcome = engine.outcome(after)
            if outcome is not None:
                value = outcome_values(outcome, players)[seat]
            else:
                value = evaluate(self.context.game, engine.view(after, None), players)[seat]
            if value > best_value + 1e-12:
                best, best_value = [text], value
            elif abs(value - best_value) <= 1e-12:
                best.append(text)
        return self.rng.choice(best)
