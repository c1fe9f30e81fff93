"""GIANTS (Easter Island): registers the engine; see `engines.giants.engine`.

Public helpers for checking a finished game: `engines.giants.dice.roll`,
`engines.giants.dice.commitment`, `engines.giants.dice.first_player`.
"""

from engines.giants.engine import GiantsEngine
from engines.registry import register

register(GiantsEngine)

__all__ = ["GiantsEngine"]
