"""`random`: a uniformly random legal action; the baseline every bot should beat."""

from __future__ import annotations

from client_cli.bots.base import Bot
from engines.base import View


class RandomBot(Bot):
    name = "random"
    description = "uniformly random legal action (seeded)"

    def choose(self, view: View, legal: list[str]) -> str:
        return self.rng.choice(legal)
