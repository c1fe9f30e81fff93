"""Giant's Causeway views: the one public document every seat and spectator receives.

No information is hidden, so the view carries the whole position — the repetition
history and guard counters included — and `state_of` rebuilds a playable state from it
(search bots do; snapshots reuse it). Per-cell maps are keyed by `"q,r"` so a move
changes only a few entries. docs/rules/causeway.md lists the fields.

What the view would only say twice is left out, because every move's patch would carry
it (docs/performance.md, "Patch frames"): the side to move (the room's `to_act` names
the seat, `seats` its colour; `state_of` reads it off `ply` and `phase`), the move just
played (the patch's `act`, the room's events) and the digest of the current position
(a function of the position shown; `state_of` recomputes it). Snapshots
(`CausewayEngine.snapshot`) keep all of it.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import islice
from typing import Any

from engines.base import BadSnapshotError, View, ViewEdit
from engines.causeway.board import (
    COLOUR_NAMES,
    GIANT,
    PHASE_DESTROY,
    PHASE_OVER,
    PHASE_PLAY,
    PHASE_SETUP,
    SPECIAL,
    SPIKEY,
    STONE_COLOUR,
    TRAPPER,
    CausewayState,
    Hex,
    cell_name,
    key_of,
    known_name,
    name,
    parse_cell,
    stacks_key_text,
)

PHASES = (PHASE_SETUP, PHASE_PLAY, PHASE_DESTROY, PHASE_OVER)
_KEY_RADIUS = 7  # cells this close to 0,0 get a key reference (the board grows from there)
# Every fixed map key of a view, those a move changes first, then the cells near the
# centre (protocol 2's key table): static, whatever the position.
VIEW_KEYS = (
    "stacks", "giants", "supply", "setup_left", "ply", "history", "white", "black", "phase", "passes",
    "won", "destroyed", "towers", "specials", "special", "end", "seats", "rules", "ply_cap",
    *(cell_name((q, r)) for d in range(_KEY_RADIUS + 1) for q in range(-d, d + 1) for r in range(-d, d + 1)
      if max(abs(q), abs(r), abs(q + r)) == d),
)
KINDS = (GIANT, TRAPPER, SPIKEY)


def view_of(state: CausewayState, rules: str, special: str | None, ply_cap: int) -> View:
    """The spectator view (identical for every seat).

    Every caller reads its parts and never changes them, so parts are shared: the part
    of a map the last state passed on unchanged (`turn_end.Finishing._finish`, `pass_on`) is the
    last view's very object, kept in the state's memo, which the room's diff passes by
    identity; small maps come from a table of their values. The view is made once a
    position, kept in the memo ("view"): the room's diff is told how it was made from
    the last position's (`CausewayEngine.view_edits`).
    """
    memo = state.memo
    made: View | None = memo.get("view")
    if made is not None and made["rules"] is rules:  # (a state of one rule set, viewed by its engine)
        return made
    # Made as a copy of the last position's view (`turn_end.pass_on` hands it over): the
    # same keys in the same order, the rule set's constants as they were, the entries a
    # move can change (MOVED) written over; this view is then an edit of that one
    # (`view_edits`) at most at those keys, so the room's diff looks at those. A copy and
    # 13 writes cost ~40% of a 17-entry literal, once a position.
    last = memo.pop("last", None)
    if last is not None and last["rules"] is rules:
        view = last.copy()
        moved = memo.get("moved", MOVED)  # (MOVED_BY's, after a step or a leap)
        memo["view_edit"] = (last, view, moved)
    else:
        view = dict.fromkeys(VIEW_ORDER)
        view["rules"], view["seats"], view["special"], view["ply_cap"] = rules, SEATS, special, ply_cap
        moved = MOVED
    # Each part read from the memo inline when it is there (nearly always but for the
    # giants after a move): one call fewer a part, once a position.
    entry = memo.get("stacks")
    if entry is not None and entry[0] is state.stacks:
        view["stacks"], view["specials"] = entry[1], entry[2]
    else:
        view["stacks"], view["specials"] = _stacks_view(memo, state.stacks)
    entry = memo.get("giants")
    view["giants"] = entry[1] if entry is not None and entry[0] is state.giants else _giants_view(memo, state.giants)
    view["supply"] = _PAIRS.get(state.supply) or _pair(state.supply)
    if "won" in moved:  # not after a step: the towers' maps and the setup pieces left as they were
        entry = memo.get("won")
        if entry is not None and entry[0] is state.won:
            view["won"], view["towers"] = entry[1], entry[2]
        else:
            view["won"], view["towers"] = _won_view(memo, state.won)
        entry = memo.get("destroyed")
        view["destroyed"] = (entry[1] if entry is not None and entry[0] is state.destroyed
                             else _destroyed_view(memo, state.destroyed))
        view["setup_left"] = _SETUPS.get(state.setup_left) or _setup_view(state.setup_left)
    view["phase"] = state.phase
    view["ply"] = state.ply
    view["passes"] = state.passes
    # not the current position's digest (`digest`); no earlier one (most positions):
    # one list for every view, which the room's diff passes by identity
    view["history"] = list(state.history) if state.history else NO_HISTORY
    view["end"] = state.end
    memo["view"] = view
    return view


# Parts shared by every view that shows them: constants, and small maps by value.
SEATS = {"white": 0, "black": 1}
# A view's keys in the order `view_of` writes them (tests/engines/causeway check it),
# and those whose entries a move may change: not the rule set's constants.
VIEW_ORDER = ("rules", "phase", "seats", "stacks", "giants", "supply", "setup_left", "won", "destroyed", "towers",
              "special", "specials", "ply", "ply_cap", "passes", "history", "end")
MOVED = tuple(k for k in VIEW_ORDER if k not in ("rules", "seats", "special", "ply_cap"))


def _moved_by(mask: int) -> tuple[str, ...]:
    keys = {"stacks", "giants", "supply", "ply"}  # a step's blank and giant (GC-B4 / GC-S2)
    if mask & LEAPT:  # drops: towers won, barriers / spellstones (GC-B6 / B7, GC-S5 / S6)
        keys |= {"won", "towers", "specials"}
    if mask & ENDED:
        keys |= {"phase", "end"}
    if mask & PASSES:
        keys.add("passes")
    if mask & HISTORY:
        keys.add("history")
    return tuple(k for k in MOVED if k in keys)


# The keys of MOVED whose entries a step or a leap may change in the view (`turn_end`
# sets the position's memo "moved" to one of these, `view_of` names them in its edit):
# by a mask of LEAPT (a leap, not a step), ENDED (the phase or the end changed), PASSES
# (the count of passes changed), HISTORY (the repetition history changed). Every other
# entry of MOVED is then the last view's very object: the maps of towers destroyed and
# the setup pieces left (GC-B2 / GC-S1: none in play, one view, `_setup_view`) never
# change in play but by a destroy step, and a step's won towers, towers and specials
# are the last position's (a blank on top, GC-B4 / GC-S2).
LEAPT, ENDED, PASSES, HISTORY = 1, 2, 4, 8
MOVED_BY: tuple[tuple[str, ...], ...] = tuple(_moved_by(mask) for mask in range(16))
NO_HISTORY: list[str] = []  # never changed
_GIANT_VIEWS = {(c, kind): [COLOUR_NAMES[c], kind] for c in (0, 1) for kind in KINDS}
_PAIRS: dict[tuple[int, int], dict[str, int]] = {}  # supplies and counts: a few hundred
_PARTS_MAX = 4096
_SETUPS: dict[tuple[tuple[str, ...], tuple[str, ...]], dict[str, list[str]]] = {}  # a few dozen

def _pair(values: tuple[int, int]) -> dict[str, int]:
    part = _PAIRS.get(values)
    if part is None:
        if len(_PAIRS) >= _PARTS_MAX:
            _PAIRS.clear()
        part = _PAIRS[values] = {"white": values[0], "black": values[1]}
    return part


def _setup_view(left: tuple[tuple[str, ...], tuple[str, ...]]) -> dict[str, list[str]]:
    part = _SETUPS.get(left)
    if part is None:
        if len(_SETUPS) >= _PARTS_MAX:
            _SETUPS.clear()
            _SETUPS[NO_SETUP] = SETUP_DONE  # play's one view of it, kept (MOVED_BY leaves it out)
        part = _SETUPS[left] = {"white": list(left[0]), "black": list(left[1])}
    return part


NO_SETUP: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # no setup piece left: play
SETUP_DONE = _setup_view(NO_SETUP)


def digest(state: CausewayState) -> str:
    """The current position's repetition digest (`board.position_key`, keyed with the
    side that moves next in play: a destroy step's player moves again, GC-B10), worked
    out from the stacks' view on first use and kept in the state's memo."""
    memo = state.memo
    key: str | None = memo.get("key")
    if key is None:
        stacks, _ = _stacks_view(memo, state.stacks)
        keyed = 1 - state.to_move if state.phase == PHASE_DESTROY else state.to_move
        key = memo["key"] = key_of(stacks, state.giants, state.supply, keyed, key_text(memo, stacks))
    return key


def key_text(memo: dict[str, Any], stacks: dict[str, str]) -> str:
    """`board.stacks_key_text` of `stacks`, the stacks' view of the state whose memo this
    is, kept there ("text": the view and its text) for the next state with the same
    view: a run of moves that add no stone (the ones whose positions are digested,
    GC-B11 / GC-S7) mostly leaves the stacks as they were (GC-S5's drop-less leaps)."""
    entry = memo.get("text")
    if entry is not None and entry[0] is stacks:
        text: str = entry[1]
        return text
    text = stacks_key_text(stacks)
    memo["text"] = (stacks, text)
    return text


def _stacks_view(memo: dict[str, Any], stacks: dict[Hex, str]) -> tuple[dict[str, str], dict[str, int]]:
    """`stacks` and `specials`."""
    entry = memo.get("stacks")
    if entry is None or entry[0] is not stacks:
        entry = memo["stacks"] = stacks_part(stacks)
    return entry[1], entry[2]


StacksPart = tuple[dict[Hex, str], dict[str, str], dict[str, int], list[Hex]]


def stacks_part(stacks: dict[Hex, str]) -> StacksPart:
    """The memo's "stacks" entry, worked out afresh: the map, its view (names in cell
    order, which `board.key_of` reads too), `specials` and the sorted cells."""
    cells = sorted(stacks)
    tops = [s[-1] for s in stacks.values()]
    specials = _pair((tops.count(SPECIAL[0]), tops.count(SPECIAL[1])))
    return stacks, {name(c): stacks[c] for c in cells}, specials, cells


def next_stacks_part(before: CausewayState, stacks: dict[Hex, str],
                     changed: tuple[Hex, ...]) -> tuple[StacksPart, ViewEdit | None]:
    """The "stacks" entry for `stacks`, the map of the position after `before` in which
    a move changed or added the stacks on some of the cells `changed` (and no other):
    `before`'s entry changed there, so the stacks are sorted and named once per game
    rather than twice per move (the view and the repetition key both read it).

    And how its view was made from `before`'s (`Engine.view_edits`, for the room's
    diff): (that map, this one, the names of the cells `changed`, in the maps' order,
    which is the cells' order), every other entry the old map's very key and value;
    None when it was not made from it (or is it)."""
    entry: StacksPart | None = before.memo.get("stacks")
    if entry is None or entry[0] is not before.stacks:
        return stacks_part(stacks), None
    if stacks is entry[0]:
        return entry, None
    _, old_view, specials, cells = entry
    if len(changed) == 1:  # a step's blank (GC-B4 / GC-S2), a setup blank, a lone drop
        cell = changed[0]
        text = known_name(cell) or name(cell)
        stack = stacks[cell]
        was = old_view.get(text)
        if was is None:  # a new stack, at its place in the cells' order: the view's
            # entries before it, it, then the rest, read off one iterator (no copy of the
            # old view first, no list of its items)
            cells = list(cells)
            at = bisect_left(cells, cell)
            cells.insert(at, cell)
            rest = iter(old_view.items())
            view = dict(islice(rest, at))
            view[text] = stack
            view.update(rest)
            was = " "
        else:
            view = dict(old_view)
            view[text] = stack
        if was[-1] != stack[-1]:  # the top changed: a barrier / spellstone came or went?
            white = specials["white"] + (stack[-1] == SPECIAL[0]) - (was[-1] == SPECIAL[0])
            black = specials["black"] + (stack[-1] == SPECIAL[1]) - (was[-1] == SPECIAL[1])
            if white != specials["white"] or black != specials["black"]:
                specials = _pair((white, black))
        return (stacks, view, specials, cells), (old_view, view, (text,))
    view = dict(old_view)
    white = counts_white = specials["white"]
    black = counts_black = specials["black"]
    text = ""
    for cell in changed:
        stack = stacks[cell]
        text = known_name(cell) or name(cell)
        was = view.get(text)
        if was is None:  # a new stack: the view's order is the cells' order
            if cells is entry[3]:
                cells = list(cells)
            at = bisect_left(cells, cell)
            cells.insert(at, cell)
            items = list(view.items())
            items.insert(at, (text, stack))
            view = dict(items)
            was = " "
        else:
            view[text] = stack
        if was[-1] != stack[-1]:  # the top changed: a barrier / spellstone came or went
            white += (stack[-1] == SPECIAL[0]) - (was[-1] == SPECIAL[0])
            black += (stack[-1] == SPECIAL[1]) - (was[-1] == SPECIAL[1])
    if white != counts_white or black != counts_black:
        specials = _pair((white, black))
    # the names written, in the cells' order (a drop's cell may come again as a choice)
    names = (text,) if len(changed) == 1 else tuple([known_name(c) or name(c) for c in sorted(set(changed))])
    return (stacks, view, specials, cells), (old_view, view, names)


def _giants_view(memo: dict[str, Any], giants: dict[Hex, tuple[int, str]]) -> dict[str, list[str]]:
    entry = memo.get("giants")
    if entry is None or entry[0] is not giants:
        # (sorted by cell alone: sorting the items compares nested tuples, twice the cost)
        entry = memo["giants"] = (giants, {known_name(c) or name(c): _GIANT_VIEWS[giants[c]] for c in sorted(giants)})
    return entry[1]


def _won_view(memo: dict[str, Any], won: dict[Hex, int]) -> tuple[dict[str, str], dict[str, int]]:
    """`won` and `towers`."""
    entry = memo.get("won")
    if entry is None or entry[0] is not won:
        owners = list(won.values())
        towers = {COLOUR_NAMES[0]: owners.count(0), COLOUR_NAMES[1]: owners.count(1)}
        entry = memo["won"] = (won, _owners_view(won), towers)
    return entry[1], entry[2]


def _destroyed_view(memo: dict[str, Any], destroyed: dict[Hex, int]) -> dict[str, str]:
    entry = memo.get("destroyed")
    if entry is None or entry[0] is not destroyed:
        entry = memo["destroyed"] = (destroyed, _owners_view(destroyed))
    return entry[1]


def _owners_view(owners: dict[Hex, int]) -> dict[str, str]:
    return {name(c): COLOUR_NAMES[o] for c, o in sorted(owners.items())}


def turn_of(phase: str, ply: int) -> int:
    """The colour to move in a reachable position: turns alternate from White at ply 0
    (setup placements, moves and passes alike), except that the player who must destroy
    a tower (GC-B10) moves again. A finished game has nobody to move (0 here)."""
    if phase == PHASE_OVER:
        return 0
    return (ply - 1) % 2 if phase == PHASE_DESTROY else ply % 2


def state_of(view: View, rules: str, *, snapshot: bool = False) -> CausewayState:
    """Rebuild the state a view shows (or, with `snapshot`, the one a snapshot holds:
    its "turn" and whole "history"); raise BadSnapshotError if it is not one of ours."""
    try:
        return _state_of(view, rules, snapshot)
    except (KeyError, ValueError, TypeError, IndexError, AttributeError) as exc:
        raise BadSnapshotError(f"not a Giant's Causeway ({rules}) view: {exc}") from exc


def _state_of(view: View, rules: str, snapshot: bool) -> CausewayState:
    if view["rules"] != rules:
        raise ValueError(f"rule set {view['rules']!r}, expected {rules!r}")
    colour = {name: c for c, name in enumerate(COLOUR_NAMES)}
    stacks = {_cell(k): str(v) for k, v in view["stacks"].items()}
    for s in stacks.values():
        if not 1 <= len(s) <= 3 or any(ch not in STONE_COLOUR for ch in s):
            raise ValueError(f"bad stack {s!r}")
    giants: dict[Hex, tuple[int, str]] = {}
    for k, (who, kind) in view["giants"].items():
        if kind not in KINDS:
            raise ValueError(f"bad giant {kind!r}")
        giants[_cell(k)] = (colour[who], str(kind))
    phase = str(view["phase"])
    if phase not in PHASES:
        raise ValueError(f"bad phase {phase!r}")
    end: Any = view["end"]
    ply = int(view["ply"])
    supply = (int(view["supply"]["white"]), int(view["supply"]["black"]))
    history = tuple(str(h) for h in view["history"])
    if snapshot:
        to_move = int(view["turn"])
        if to_move not in (0, 1):
            raise ValueError(f"bad turn {to_move!r}")
        history = history[:-1]  # a snapshot's history ends with the current digest
    else:
        to_move = turn_of(phase, ply)
    return CausewayState(
        stacks=stacks,
        giants=giants,
        supply=supply,
        setup_left=(
            tuple(str(p) for p in view["setup_left"]["white"]),
            tuple(str(p) for p in view["setup_left"]["black"]),
        ),
        won={_cell(k): colour[v] for k, v in view["won"].items()},
        destroyed={_cell(k): colour[v] for k, v in view["destroyed"].items()},
        to_move=to_move,
        phase=phase,
        ply=ply,
        passes=int(view["passes"]),
        history=history,
        end=None if end is None else str(end),
    )


def _cell(text: str) -> Hex:
    cell = parse_cell(text)
    if cell is None:
        raise ValueError(f"bad cell {text!r}")
    return cell
