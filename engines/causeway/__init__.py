"""Giant's Causeway: importing this package registers its three rule sets.

`barrier` (the default, registered first), `spellstone` and `quick`, as
shared/specs/causeway.md decides them; docs/rules/causeway.md tells the rules and
the notation. `board` holds the position and geometry, `notation` the actions,
`legal_text` the legal list written in notation, `views` the view, `engine` the
shared turn machinery, `barrier` and `spellstone` the rule sets.
"""

from engines.causeway.barrier import Barrier
from engines.causeway.board import (
    BLACK,
    COLOUR_NAMES,
    DIRECTION_NAMES,
    WHITE,
    CausewayState,
    cell_name,
    parse_cell,
    position_key,
)
from engines.causeway.engine import CausewayEngine
from engines.causeway.notation import (
    PASS,
    Action,
    Destroy,
    Drop,
    Leap,
    Pass,
    Place,
    Step,
    format_action,
    parse_action,
)
from engines.causeway.spellstone import Quick, Spellstone

__all__ = [
    "BLACK",
    "COLOUR_NAMES",
    "DIRECTION_NAMES",
    "PASS",
    "WHITE",
    "Action",
    "Barrier",
    "CausewayEngine",
    "CausewayState",
    "Destroy",
    "Drop",
    "Leap",
    "Pass",
    "Place",
    "Quick",
    "Spellstone",
    "Step",
    "cell_name",
    "format_action",
    "parse_action",
    "parse_cell",
    "position_key",
]
