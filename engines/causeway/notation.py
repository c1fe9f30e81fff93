"""Giant's Causeway actions and their notation (documented in docs/rules/causeway.md).

Cells are written `q,r` (axial, GC-1); directions `e ne nw w sw se`. Spaces are
ignored and letters may be any case.

    giant@0,1   blank@-1,1   trapper@2,-1   spikey@0,1    setup placements
    0,1>3,-2                                             step: giant on 0,1 goes to 3,-2
    0,1^e   0,1^e+1,1   0,1^e+1,1+2,1                    leap east, with 0-2 drops
    0,1^e+2,1/5,-3                                       drop on 2,1; the barrier is taken
                                                         from (or the spellstone turned
                                                         around on) 5,-3
    destroy@4,0                                          GC-B10 destroy step
    pass

Drops are listed in the order the giant passes over them, which is also the order
they are resolved in (GC-B7).
"""

from __future__ import annotations

from dataclasses import dataclass

from engines.base import NotationError
from engines.causeway.board import (
    BLANK_PIECE,
    DIRECTION_INDEX,
    DIRECTION_NAMES,
    GIANT,
    SPIKEY,
    TRAPPER,
    Hex,
    cell_name,
    known_cell,
    known_name,
    parse_cell,
)

PIECES = (GIANT, BLANK_PIECE, TRAPPER, SPIKEY)


@dataclass(frozen=True, slots=True)
class Place:
    """A setup placement (GC-B2, GC-S1)."""

    piece: str
    cell: Hex


@dataclass(frozen=True, slots=True)
class Step:
    """GC-B4 / GC-S2 / GC-S3: lay a blank under the giant on `start`, move it to `to`."""

    start: Hex
    to: Hex


@dataclass(frozen=True, slots=True)
class Drop:
    """One drop of a leap; `choice` names the tower the barrier is taken from (GC-B7) or
    the spellstone turned around (GC-S6) when the rules ask for one, else None."""

    cell: Hex
    choice: Hex | None = None


@dataclass(frozen=True, slots=True)
class Leap:
    """GC-B5 / GC-S4: the giant on `start` leaps along `direction` (index into GC-1)."""

    start: Hex
    direction: int
    drops: tuple[Drop, ...] = ()


@dataclass(frozen=True, slots=True)
class Destroy:
    """GC-B10: the player who ran out of blanks destroys one of their won towers."""

    cell: Hex


@dataclass(frozen=True, slots=True)
class Pass:
    """GC-B11 / GC-S7: only offered when nothing else is legal."""


PASS = Pass()

Action = Place | Step | Leap | Destroy | Pass


def format_action(action: Action) -> str:
    """The notation of an action; `parse_action` reads it back to an equal action."""
    if isinstance(action, Place):
        return f"{action.piece}@{cell_name(action.cell)}"
    if isinstance(action, Step):  # names made already read with one lookup (`board.known_name`)
        return (known_name(action.start) or cell_name(action.start)) + ">" + (known_name(action.to) or cell_name(action.to))
    if isinstance(action, Leap):
        text = f"{known_name(action.start) or cell_name(action.start)}^{DIRECTION_NAMES[action.direction]}"
        for drop in action.drops:
            text += "+" + (known_name(drop.cell) or cell_name(drop.cell))
            if drop.choice is not None:
                text += "/" + (known_name(drop.choice) or cell_name(drop.choice))
        return text
    if isinstance(action, Destroy):
        return f"destroy@{cell_name(action.cell)}"
    if isinstance(action, Pass):
        return "pass"
    raise TypeError(f"not a causeway action: {action!r}")


def _cell(text: str, whole: str) -> Hex:
    cell = known_cell(text) or parse_cell(text)
    if cell is None:
        raise NotationError(f"{whole!r}: {text.strip()!r} is not a cell (write q,r like 0,-1)")
    return cell


# Steps, leaps and drops as `parse_action` makes them, once a move: a frozen dataclass's
# `__init__` sets each field through `object.__setattr__` (~3,000 instructions an
# action); its slots' own setters do the same in C. The actions stay frozen.
_new = object.__new__
_step_start, _step_to = (getattr(Step, f).__set__ for f in ("start", "to"))
_leap_start, _leap_direction, _leap_drops = (getattr(Leap, f).__set__ for f in ("start", "direction", "drops"))
_drop_cell, _drop_choice = (getattr(Drop, f).__set__ for f in ("cell", "choice"))


def parse_action(text: str) -> Action:
    """Read one action; raise NotationError for text that is no action at all.

    Legality is not checked here (the engine's `apply` does that). A cell is read from
    the names table when its text is a name made already (`board.known_cell`: the
    cells of the position's legal list), else by `parse_cell`.
    """
    raw = "".join(text.split()).lower()
    if ">" in raw and "@" not in raw and "^" not in raw:  # a step: most moves
        head, _, tail = raw.partition(">")
        start = known_cell(head) or _cell(head, text)
        to = known_cell(tail) or _cell(tail, text)
        step = _new(Step)
        _step_start(step, start)
        _step_to(step, to)
        return step
    if raw == "pass":
        return PASS
    if "@" in raw:
        word, _, where = raw.partition("@")
        if word == "destroy":
            return Destroy(_cell(where, text))
        if word in PIECES:
            return Place(word, _cell(where, text))
        raise NotationError(f"{text!r}: unknown piece {word!r} (giant, blank, trapper, spikey)")
    if "^" in raw:
        head, _, rest = raw.partition("^")
        start = known_cell(head) or _cell(head, text)
        name, *drop_texts = rest.split("+")
        direction = DIRECTION_INDEX.get(name)
        if direction is None:
            raise NotationError(f"{text!r}: direction must be one of {' '.join(DIRECTION_NAMES)}")
        drops = []
        for part in drop_texts:
            target, slash, choice = part.partition("/")
            drop = _new(Drop)
            _drop_cell(drop, known_cell(target) or _cell(target, text))
            _drop_choice(drop, (known_cell(choice) or _cell(choice, text)) if slash else None)
            drops.append(drop)
        leap = _new(Leap)
        _leap_start(leap, start)
        _leap_direction(leap, direction)
        _leap_drops(leap, tuple(drops))
        return leap
    raise NotationError(
        f"{text!r}: expected a placement (giant@0,1), a step (0,1>2,-1), "
        "a leap (0,1^e+1,1), destroy@q,r or pass"
    )
