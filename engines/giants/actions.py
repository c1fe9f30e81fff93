"""GIANTS actions: small frozen dataclasses and their text notation.

Notation (one action per line, case-insensitive keywords, hexes as `(col,row)`):

    bid 2 w2 c                      GI-8  2 markers, 2 workers and the chief as sculptors
    bid 0                           GI-8  the empty bid
    claim 3 chief | claim 2 workers GI-10 take a Moai of that size, paying as named
    place worker (5,3) logs 1       GI-12 also `place sorcerer (c,r) logs k`, `place chief (c,r)`
    sorcerer village | hut | clay   GI-13 power on that special hex
    sorcerer forest (6,4)           GI-13 take that forest's logs
    sorcerer reserve A05 (6,0)      GI-13 stand on (6,0) and reserve Ahu A05
    chief village ...               GI-14 the same powers for the chief (2 half-tablets)
    tablet                          GI-15 a marker to the front for 1 half-tablet
    neutral (5,3)                   GI-16 a neutral worker from beside the board
    neutral (5,3)>(6,3)             GI-16 move the unmarked neutral worker on (5,3)
    transport M7 (12,4)>(11,4)>(10,4)        GI-18 default piece assignment
    transport M7 (12,4)>(11,4)=w1+l>(10,4)=c0 GI-18 named pieces in entered hexes
    erect M7 A10                    GI-20
    headdress H3 A10                GI-21
    mark M7                         GI-22 (also: mark a returned statue, GI-24)
    look A05                        GI-23
    release M7                      GI-25 take your marker back from a statue
    pass                            GI-17 / GI-24 / done with returns and cleanup

Piece tokens in a named assignment: `w<seat>` worker, `s<seat>` sorcerer,
`c<seat>` chief, `n` unmarked neutral worker, `n<seat>` neutral worker with that seat's
marker, `l` log. A hex written without `=` uses the default assignment (GI-18).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engines.base import NotationError
from engines.giants.board import ISLAND, Hex, format_hex, parse_hex
from engines.giants.state import Bid

FIGURES = ("worker", "sorcerer", "chief")
POWERS = ("village", "hut", "forest", "reserve", "clay")
TOKEN_RE = re.compile(r"^(?:[wsc][0-9]|n[0-9]?|l)$")


@dataclass(frozen=True, slots=True)
class Claim:
    size: int
    chief: bool


@dataclass(frozen=True, slots=True)
class Pass:
    pass


@dataclass(frozen=True, slots=True)
class Place:
    figure: str  # worker | sorcerer | chief
    hex: Hex
    logs: int = 0


@dataclass(frozen=True, slots=True)
class Power:
    figure: str  # sorcerer | chief
    power: str  # village | hut | forest | reserve | clay
    hex: Hex
    ahu: str | None = None


@dataclass(frozen=True, slots=True)
class Tablet:
    pass


@dataclass(frozen=True, slots=True)
class Neutral:
    source: Hex | None  # None = from beside the board
    target: Hex


@dataclass(frozen=True, slots=True)
class Transport:
    statue: str
    path: tuple[Hex, ...]
    uses: tuple[tuple[str, ...] | None, ...] | None = None  # one per entered hex


@dataclass(frozen=True, slots=True)
class Erect:
    statue: str
    ahu: str


@dataclass(frozen=True, slots=True)
class Crown:
    statue: str
    ahu: str


@dataclass(frozen=True, slots=True)
class Mark:
    statue: str


@dataclass(frozen=True, slots=True)
class Look:
    ahu: str


@dataclass(frozen=True, slots=True)
class Release:
    statue: str


Action = (
    Bid | Claim | Pass | Place | Power | Tablet | Neutral | Transport | Erect | Crown | Mark
    | Look | Release
)

_SPECIAL_HEX = {"village": ISLAND.village, "hut": ISLAND.hut, "clay": ISLAND.clay_pit}
_STATUE_RE = re.compile(r"^[MH][0-9]+$")
_AHU_RE = re.compile(r"^A[0-9][0-9]$")


def format_action(action: Action) -> str:
    """The notation of `action`; `parse_action` reads it back to an equal action.

    An object of the table `parse_action` answers from (a room formats the action it
    parsed, twice) has its text there: the table's objects live as long as the
    process, so no other object can have the id of one of them."""
    text = _TEXT_OF.get(id(action))
    if text is not None:
        return text
    return _format(action)


def _format(action: Action) -> str:
    if isinstance(action, Bid):
        text = f"bid {action.markers}"
        if action.workers:
            text += f" w{action.workers}"
        return text + (" c" if action.chief else "")
    if isinstance(action, Claim):
        return f"claim {action.size} {'chief' if action.chief else 'workers'}"
    if isinstance(action, Pass):
        return "pass"
    if isinstance(action, Place):
        if action.figure == "chief":
            return f"place chief {format_hex(action.hex)}"
        return f"place {action.figure} {format_hex(action.hex)} logs {action.logs}"
    if isinstance(action, Power):
        if action.power == "forest":
            return f"{action.figure} forest {format_hex(action.hex)}"
        if action.power == "reserve":
            return f"{action.figure} reserve {action.ahu} {format_hex(action.hex)}"
        return f"{action.figure} {action.power}"
    if isinstance(action, Tablet):
        return "tablet"
    if isinstance(action, Neutral):
        if action.source is None:
            return f"neutral {format_hex(action.target)}"
        return f"neutral {format_hex(action.source)}>{format_hex(action.target)}"
    if isinstance(action, Transport):
        parts = [format_hex(action.path[0])]
        for i, cell in enumerate(action.path[1:]):
            use = action.uses[i] if action.uses is not None else None
            parts.append(format_hex(cell) + ("=" + "+".join(use) if use is not None else ""))
        return f"transport {action.statue} " + ">".join(parts)
    if isinstance(action, Erect):
        return f"erect {action.statue} {action.ahu}"
    if isinstance(action, Crown):
        return f"headdress {action.statue} {action.ahu}"
    if isinstance(action, Mark):
        return f"mark {action.statue}"
    if isinstance(action, Look):
        return f"look {action.ahu}"
    if isinstance(action, Release):
        return f"release {action.statue}"
    raise TypeError(f"not a giants action: {action!r}")


def _hex(text: str) -> Hex:
    cell = parse_hex(text)
    if cell is None:
        raise NotationError(f"expected a hex like (5,3), got {text!r}")
    return cell


def _digits(text: str) -> bool:
    # ASCII digits only: str.isdigit() is also true for "²" or "①", which int() refuses,
    # and int() reads other scripts' digits ("٣") that no notation shows.
    return text.isascii() and text.isdigit()


def _int(text: str) -> int:
    if not _digits(text) or len(text) > 6:
        raise NotationError(f"expected a number, got {text!r}")
    return int(text)


def _statue(text: str) -> str:
    text = text.upper()
    if not _STATUE_RE.match(text):
        raise NotationError(f"expected a statue like M7 or H3, got {text!r}")
    return text


def _ahu(text: str) -> str:
    text = text.upper()
    if not _AHU_RE.match(text):
        raise NotationError(f"expected an Ahu like A05, got {text!r}")
    return text


def _parse_bid(words: list[str]) -> Bid:
    if not words:
        raise NotationError("bid wants a marker count, e.g. `bid 1 w2 c`")
    markers = _int(words[0])
    workers, chief = 0, False
    for word in words[1:]:
        if word == "c" and not chief:
            chief = True
        elif word.startswith("w") and workers == 0:
            workers = _int(word[1:])
        else:
            raise NotationError(f"unexpected {word!r} in a bid")
    return Bid(markers, workers, chief)


def _parse_transport(words: list[str]) -> Transport:
    if len(words) != 2:
        raise NotationError("transport wants a statue and a path, e.g. `transport M7 (12,4)>(11,4)`")
    statue = _statue(words[0])
    steps = words[1].split(">")
    if len(steps) < 2:
        raise NotationError("a transport path needs at least two hexes")
    path = [_hex(steps[0])]
    uses: list[tuple[str, ...] | None] = []
    for step in steps[1:]:
        cell, eq, tokens = step.partition("=")
        path.append(_hex(cell))
        if not eq:
            uses.append(None)
            continue
        names = tuple(tokens.split("+"))
        if not all(TOKEN_RE.match(t) for t in names):
            raise NotationError(f"bad piece list {tokens!r} (tokens: w0 s0 c0 n n0 l)")
        uses.append(names)
    named = None if all(u is None for u in uses) else tuple(uses)
    return Transport(statue, tuple(path), named)


def parse_action(text: str) -> Action:
    """Read one action; NotationError if it is not GIANTS notation (legality is not checked).

    An action written as the legal lists write it, of the kinds that do not name a
    statue (bids, claims, placements, powers, neutral workers from beside the board,
    tablet, pass), is looked up in a table made once (`_KNOWN`); any other text is read.
    """
    known = _KNOWN.get(text)
    if known is not None:
        return known
    return _parse(text)


def _parse(text: str) -> Action:
    words = text.strip().lower().split()
    if not words:
        raise NotationError("empty action")
    head, rest = words[0], words[1:]
    if head == "bid":
        return _parse_bid(rest)
    if head == "claim" and len(rest) == 2 and rest[1] in ("chief", "workers"):
        return Claim(_int(rest[0]), rest[1] == "chief")
    if head == "pass" and not rest:
        return Pass()
    if head == "tablet" and not rest:
        return Tablet()
    if head == "place" and rest and rest[0] in FIGURES:
        if rest[0] == "chief" and len(rest) == 2:
            return Place("chief", _hex(rest[1]), 0)
        if rest[0] != "chief" and len(rest) == 4 and rest[2] == "logs":
            return Place(rest[0], _hex(rest[1]), _int(rest[3]))
        raise NotationError("use `place worker (c,r) logs k` or `place chief (c,r)`")
    if head in ("sorcerer", "chief") and rest and rest[0] in POWERS:
        power = rest[0]
        if power in _SPECIAL_HEX and len(rest) == 1:
            return Power(head, power, _SPECIAL_HEX[power])
        if power == "forest" and len(rest) == 2:
            return Power(head, power, _hex(rest[1]))
        if power == "reserve" and len(rest) == 3:
            return Power(head, power, _hex(rest[2]), _ahu(rest[1]))
        raise NotationError(f"bad {head} {power} action")
    if head == "neutral" and len(rest) == 1:
        source, arrow, target = rest[0].partition(">")
        if arrow:
            return Neutral(_hex(source), _hex(target))
        return Neutral(None, _hex(source))
    if head == "transport":
        return _parse_transport(rest)
    if head in ("erect", "headdress") and len(rest) == 2:
        cls = Erect if head == "erect" else Crown
        return cls(_statue(rest[0]), _ahu(rest[1]))
    if head in ("mark", "release") and len(rest) == 1:
        return (Mark if head == "mark" else Release)(_statue(rest[0]))
    if head == "look" and len(rest) == 1:
        return Look(_ahu(rest[0]))
    raise NotationError(f"not a GIANTS action: {text!r}")


def _known_actions() -> dict[str, Action]:
    """Every action of those kinds a game can hold (GI-2: at most 6 markers and 6
    workers in a bid), by its notation: frozen objects, shared by every game."""
    acts: list[Action] = [Pass(), Tablet()]
    acts += [Bid(m, w, c) for m in range(7) for w in range(7) for c in (False, True)]
    acts += [Claim(size, chief) for size in (1, 2, 3) for chief in (False, True)]
    for cell in ISLAND.land_order:
        acts += [Place(figure, cell, k) for figure in ("worker", "sorcerer") for k in range(3)]
        acts += [Place("chief", cell, 0), Neutral(None, cell)]
    for figure in ("sorcerer", "chief"):
        acts += [Power(figure, power, cell) for power, cell in _SPECIAL_HEX.items()]
        acts += [Power(figure, "forest", cell) for cell in ISLAND.forests]
        acts += [Power(figure, "reserve", cell, ahu.id) for ahu in ISLAND.ahu for cell in ahu.adjacent]
    return {_format(a): a for a in acts}


_KNOWN = _known_actions()
_TEXT_OF = {id(action): text for text, action in _KNOWN.items()}
