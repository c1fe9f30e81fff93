"""`mcts`: UCT Monte-Carlo tree search over the Engine interface.

For perfect-information games only: the bot rebuilds the position from its own view
(`engine.state_from_view`) and searches from there, so it sees nothing a seat could
not. Each iteration selects down the tree by UCB1 (per-seat rewards, so it works for
any number of seats), expands one action, plays random moves for at most `rollout`
plies and scores the end with the outcome or, if unfinished, the game's heuristic.

Parameters (bot spec `mcts,iterations=400,ms=0,rollout=0,c=0.1,alpha=0.5,order=1,order_all=0`):
`iterations` bounds the search; `ms` > 0 bounds it by wall time instead (not
repeatable); either way the search also ends as soon as `stopped()` says so; `rollout` is the playout depth (default 0 = score the new leaf with the
game's heuristic, or 400 plies when the game has none); `order` expands the root's
actions best-first by the heuristic (`order_all` every node's: stronger, slower); `c` is
the exploration constant (small, because heuristic values differ by little); `alpha`
mixes in implicit minimax backups (Lanctot et al., 2014): a node's value is
(1 - alpha) * its mean + alpha * the heuristic value of the best line below it, which
keeps the search from averaging a good move together with the opponent's bad replies.
"""

from __future__ import annotations

import math
import time
from typing import Any

from engines.base import Engine, View
from engines.bots.base import Bot, BotError
from engines.bots.heuristics import evaluate, has_heuristic, outcome_values


class _Node:
    __slots__ = (
        "actions", "children", "minimax", "mover", "state", "terminal", "totals", "untried", "visits",
    )

    def __init__(self, engine: Engine, state: Any, players: int, actions: list[Any] | None = None) -> None:
        self.state = state
        outcome = engine.outcome(state)
        self.terminal: list[float] | None = (
            outcome_values(outcome, players) if outcome is not None else None
        )
        seats = sorted(engine.to_act(state)) if outcome is None else []
        self.mover: int = seats[0] if seats else -1
        if actions is None:
            actions = engine.legal_actions(state, self.mover) if seats else []
        self.actions: list[Any] = actions
        self.untried: list[int] = list(range(len(actions)))
        self.children: list[tuple[int, _Node]] = []
        self.visits = 0
        # Implicit minimax value (Lanctot et al. 2014): the leaf's evaluation, then the
        # best child's value for the seat to move, backed up along each iteration's path.
        self.minimax: list[float] | None = self.terminal
        self.totals = [0.0] * players


class MctsBot(Bot):
    name = "mcts"
    description = "UCT Monte-Carlo tree search from the seat's own view (perfect-information games)"
    games = frozenset({"giantslayer", "causeway", "tara"})

    def setup(self) -> None:
        self.engine = self.context.engine()
        if self.engine.info.hidden_information:
            raise BotError(f"mcts needs perfect information; {self.context.game} has hidden state")
        self.iterations: int = self.param("iterations", 400)
        self.ms: float = self.param("ms", 0.0)
        informed = has_heuristic(self.context.game)
        self.rollout: int = self.param("rollout", 0 if informed else 400)
        self.order: bool = self.param("order", informed)
        self.order_all: bool = self.param("order_all", False)
        self.c: float = self.param("c", 0.1 if informed else 1.0)
        self.alpha: float = self.param("alpha", 0.5 if informed else 0.0)
        self.last_iterations = 0

    def choose(self, view: View, legal: list[str]) -> str:
        engine, seat, players = self.engine, self.context.seat, self.context.players
        if len(legal) == 1:
            return legal[0]
        state = engine.state_from_view(view)
        actions = [engine.parse_action(state, seat, text) for text in legal]
        root = _Node(engine, state, players, actions)
        root.mover = seat
        if self.order:
            # Expand the root's actions best-first by the heuristic, so a budget smaller
            # than the branching factor still looks at the promising ones.
            # Unscored actions (the caller stopped us meanwhile) sort first, i.e. last tried.
            scores = [-math.inf] * len(actions)
            for i, action in enumerate(actions):
                if self.stopped():
                    break
                scores[i] = self._score_after(state, seat, action)
            root.untried.sort(key=lambda i: scores[i])
        deadline = time.perf_counter() + self.ms / 1000.0 if self.ms > 0 else None
        done = 0
        while True:
            if self.stopped():
                break  # the caller's budget is spent: answer with what we have
            if deadline is not None:
                if time.perf_counter() >= deadline and done > 0:
                    break
            elif done >= self.iterations:
                break
            self._iterate(root)
            done += 1
        self.last_iterations = done
        if not root.children:
            return self.rng.choice(legal)  # stopped before the first iteration
        # The most visited action is the most robust choice.
        best_visits = max(child.visits for _, child in root.children)
        best = [legal[i] for i, child in root.children if child.visits == best_visits]
        return self.rng.choice(best)

    def _iterate(self, root: _Node) -> None:
        engine, players = self.engine, self.context.players
        node, path = root, [root]
        # Selection: descend through fully expanded nodes.
        while node.terminal is None and not node.untried and node.children:
            node = self._select(node)
            path.append(node)
        # Expansion: one untried action.
        if node.terminal is None and node.untried:
            pick = node.untried.pop(self._pick_untried(node, root))
            child_state = engine.apply(node.state, node.mover, node.actions[pick]).state
            child = _Node(engine, child_state, players)
            node.children.append((pick, child))
            node = child
            path.append(node)
        values = node.terminal if node.terminal is not None else self._playout(node.state)
        if node.minimax is None:
            node.minimax = values
        for visited in reversed(path[:-1]):
            mover = visited.mover
            known = [child.minimax for _, child in visited.children if child.minimax is not None]
            visited.minimax = max(known, key=lambda v: v[mover])
        for visited in path:
            visited.visits += 1
            totals = visited.totals
            for s in range(players):
                totals[s] += values[s]

    def _pick_untried(self, node: _Node, root: _Node) -> int:
        """Index into `node.untried`: the root's are sorted best-last, the rest random."""
        if self.order and (node is root or self.order_all):
            if node is not root and len(node.untried) == len(node.actions):
                scores = [self._score_after(node.state, node.mover, a) for a in node.actions]
                node.untried.sort(key=lambda i: scores[i])
            return len(node.untried) - 1
        return self.rng.randrange(len(node.untried))

    def _score_after(self, state: Any, seat: int, action: Any) -> float:
        after = self.engine.apply(state, seat, action).state
        outcome = self.engine.outcome(after)
        players = self.context.players
        if outcome is not None:
            return outcome_values(outcome, players)[seat]
        return evaluate(self.context.game, self.engine.view(after, None), players)[seat] + (
            self.rng.random() * 1e-6  # random tie-break
        )

    def _select(self, node: _Node) -> _Node:
        log_n = math.log(node.visits)
        mover, c, alpha = node.mover, self.c, self.alpha
        best_child, best_score = node.children[0][1], -math.inf
        for _, child in node.children:
            mean = child.totals[mover] / child.visits
            if alpha and child.minimax is not None:
                mean = (1.0 - alpha) * mean + alpha * child.minimax[mover]
            score = mean + c * math.sqrt(log_n / child.visits)
            if score > best_score:
                best_child, best_score = child, score
        return best_child

    def _playout(self, state: Any) -> list[float]:
        engine, players, rng = self.engine, self.context.players, self.rng
        for _ in range(self.rollout):
            outcome = engine.outcome(state)
            if outcome is not None:
                return outcome_values(outcome, players)
            seats = sorted(engine.to_act(state))
            seat = seats[0] if len(seats) == 1 else rng.choice(seats)
            actions = engine.legal_actions(state, seat)
            state = engine.apply(state, seat, rng.choice(actions)).state
        outcome = engine.outcome(state)
        if outcome is not None:
            return outcome_values(outcome, players)
        return evaluate(self.context.game, engine.view(state, None), players)
