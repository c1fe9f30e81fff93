"""`random`: a uniformly random legal action; the baseline every bot should beat."""

from __future__ import annotations

from engines.base import View
from engines.bots.base import Bot


class RandomBot(Bot):
    name = "random"
    description = "uniformly random legal action (seeded)"

    def choose(self, view: View, legal: list[str]) -> str:
        return self.rng.choice(legal)
