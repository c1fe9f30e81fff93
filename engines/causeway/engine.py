"""Giant's Causeway: the turn machinery every rule set shares.

`CausewayEngine` runs setup placements, steps, leaps with drops, tower completion,
the end conditions and the guards (GC-B11, GC-S7). What differs between rule sets is
a handful of hooks, overridden by `barrier.Barrier`, `spellstone.Spellstone` and
`spellstone.Quick`:

- `traps(kind)` / `leapable(kind)`: which giants trap (GC-B3, GC-S3) and which may be
  leapt over (GC-B5, GC-S4);
- `step_targets`: teleport (GC-B4) or adjacent with the slide rule (GC-S2, GC-S3);
- `drop_sizes`: 1-2 (GC-B6) or 0-2 (GC-S5);
- `special_choices` / `no_majority`: barrier (GC-B7), spellstone (GC-S6), dead tower
  (GC-Q1);
- `drop_end` / `move_end` / `result_key` / `score`: the end of the game.

`apply` checks and plays a move into a `Work`; what follows it (the next state, the
end conditions and guards, the outcome) is `turn_end.Finishing`'s, and the leaps are
`leaps.Leaping`'s.
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping
from functools import cached_property
from typing import Any, ClassVar

from engines.base import (
    BadSnapshotError,
    Engine,
    GameOverError,
    IllegalActionError,
    NotYourTurnError,
    Seat,
    Transition,
    View,
    ViewEdit,
)
from engines.causeway import legal_text, notation, views
from engines.causeway.board import (
    BLANK,
    BLANK_PIECE,
    COLOUR_NAMES,
    DIRECTION_NAMES,
    GIANT,
    PHASE_DESTROY,
    PHASE_OVER,
    PHASE_PLAY,
    PHASE_SETUP,
    SPIKEY,
    TRAPPER,
    CausewayState,
    Hex,
    Work,
    around,
    cell_name,
    frontier,
    known_name,
    known_ring,
    name,
    names,
    neighbours,
)
from engines.causeway.connected import split_without
from engines.causeway.leaps import Leaping
from engines.causeway.notation import PASS, Action, Destroy, Drop, Leap, Pass, Place, Step
from engines.causeway.turn_end import Finishing

# `to_act`'s answers, made once (a room asks about five times a move).
NOBODY: frozenset[Seat] = frozenset()
ACTING: tuple[frozenset[Seat], frozenset[Seat]] = (frozenset((0,)), frozenset((1,)))


# Each rule set's opening position (`CausewayEngine.new_game`), built on first use.
_INITIAL: dict[type, CausewayState] = {}


class CausewayEngine(Leaping, Finishing, Engine[CausewayState, Action]):
    """One rule set of Giant's Causeway; subclasses fill in the hooks below."""

    SETUP_STACKS: ClassVar[dict[Hex, str]]
    SETUP_PIECES: ClassVar[tuple[str, ...]]
    START_SUPPLY: ClassVar[int]  # blanks in supply before the setup placements
    PLY_CAP: ClassVar[int]
    SPECIAL_NAME: ClassVar[str | None] = None  # "barrier", "spellstone" or None

    # -- hooks --------------------------------------------------------------------

    def traps(self, kind: str) -> bool:
        """Can an opponent giant of this kind trap (GC-B3 any giant, GC-S3 the trapper)?"""
        raise NotImplementedError

    def leapable(self, kind: str) -> bool:
        """May a leap pass over a giant of this kind (GC-B5 never, GC-S4 trappers)?"""
        raise NotImplementedError

    def step_targets(self, state: CausewayState, cell: Hex, trapped: bool, mask: int = -1) -> list[Hex]:
        """Cells the giant on `cell` may step to (its supply is known to be non-empty);
        `mask` is `cell`'s `ring_mask` if the caller has it."""
        raise NotImplementedError

    def step_names(self, state: CausewayState, cell: Hex, trapped: bool, mask: int = -1) -> list[str]:
        """`step_targets` as cell names (the legal list in notation); read, never changed."""
        return names(self.step_targets(state, cell, trapped, mask))

    def drop_sizes(self, droppable: int, supply: int) -> list[int]:
        """How many blanks a leap over `droppable` open stacks may drop."""
        raise NotImplementedError

    @cached_property
    def drop_table(self) -> tuple[tuple[tuple[int, ...], ...], ...]:
        """`drop_sizes(droppable, supply)` as `drop_table[min(supply, 2)][min(droppable, 2)]`
        (at most two drops, GC-B6 / GC-S5: larger counts answer as 2 does), for the
        legal list, which would otherwise call it for every leap."""
        return tuple(tuple(tuple(self.drop_sizes(d, s)) for d in range(3)) for s in range(3))

    # How the legal list writes a free giant's steps without asking `step_names`:
    # "frontier" every empty cell beside the Causeway (GC-B4: the state's kept frontier),
    # "slide" the slide rule's cells plus a trapper's `trap_steps` (GC-S2, GC-S3);
    # None: `step_names` is asked.
    STEP_RULE: ClassVar[str | None] = None

    def trap_steps(self, state: CausewayState, colour: int, occupied: Container[Hex] | None = None) -> list[Hex]:
        """GC-S3's trap steps of `colour`'s trapper (cells beside a lone opponent giant),
        unsorted; only rule sets whose STEP_RULE is "slide" have them. `occupied` is
        `state.stacks | state.giants` if the caller has it."""
        return []

    @cached_property
    def trapping_kinds(self) -> frozenset[str]:
        """The giant kinds `traps` answers yes for (the legal list reads this set)."""
        return frozenset(k for k in (GIANT, TRAPPER, SPIKEY) if self.traps(k))

    @cached_property
    def leapable_kinds(self) -> frozenset[str]:
        """The giant kinds `leapable` answers yes for (the legal list reads this set)."""
        return frozenset(k for k in (GIANT, TRAPPER, SPIKEY) if self.leapable(k))

    @cached_property
    def run_kinds(self) -> tuple[dict[str | tuple[int, str], int], ...]:
        """By colour, what a leap makes of each stack and giant it may run over (the legal
        list reads these tables: `legal_text.run_kinds`)."""
        return legal_text.run_kinds(self)

    def special_choices(self, work: Work, colour: int, cell: Hex) -> list[Hex | None]:
        """Choices a no-majority completion on `cell` needs ([None] if none)."""
        return [None]

    def no_majority(self, work: Work, colour: int, cell: Hex, choice: Hex | None) -> None:
        """Complete `cell` whose two lower stones are both the opponent's."""
        raise NotImplementedError

    def drop_end(self, work: Work) -> str | None:
        """An end reason that stops the move at once after a drop (GC-B9, GC-S7, GC-Q2)."""
        raise NotImplementedError

    # `move_end`, `needs_destroy`, `score` and `result_key`: turn_end.Finishing's.

    # -- creation -----------------------------------------------------------------

    def new_game(self, players: int, options: Mapping[str, Any], seed: int) -> CausewayState:
        """The rule set's opening position: the same for every game (no option or
        seed changes it), and states are immutable, so every new game gets the same
        object (memory per new room, docs/performance.md)."""
        self.validate_options(players, options)
        initial = _INITIAL.get(type(self))
        if initial is None:
            stacks = dict(self.SETUP_STACKS)
            supply = (self.START_SUPPLY, self.START_SUPPLY)
            initial = _INITIAL[type(self)] = CausewayState(
                stacks=stacks,
                giants={},
                supply=supply,
                setup_left=(self.SETUP_PIECES, self.SETUP_PIECES),
                won={},
                destroyed={},
                to_move=0,
                phase=PHASE_SETUP,
            )
            initial.memo["stacks"] = views.stacks_part(stacks)  # carried by every move (_finish)
        return initial

    def players(self, state: CausewayState) -> int:
        return 2

    # -- turn structure -----------------------------------------------------------

    def to_act(self, state: CausewayState) -> frozenset[Seat]:
        return NOBODY if state.phase == PHASE_OVER else ACTING[state.to_move]

    def is_trapped(self, state: CausewayState, cell: Hex, colour: int) -> bool:
        """GC-B3 / GC-S3: an opponent trapping giant beside `cell` touches nothing else."""
        giants = state.giants
        get = giants.get
        for n in known_ring(cell) or around(cell):
            giant = get(n)
            if giant is not None and giant[0] != colour and self.traps(giant[1]):
                stacks = state.stacks
                for m in known_ring(n) or around(n):  # does it touch anything but `cell`?
                    if m != cell and (m in stacks or m in giants):
                        break
                else:
                    return True
        return False

    def legal_actions(self, state: CausewayState, seat: Seat) -> list[Action]:
        if state.phase == PHASE_OVER or seat != state.to_move:
            return []
        if state.phase == PHASE_SETUP:
            return list(self._placements(state, seat))
        if state.phase == PHASE_DESTROY:
            return [Destroy(c) for c, owner in sorted(state.won.items()) if owner == seat]
        actions: list[Action] = []
        for cell in sorted(c for c, g in state.giants.items() if g[0] == seat):
            actions.extend(self._giant_actions(state, cell, seat))
        return actions or [PASS]

    def legal_notation(self, state: CausewayState, seat: Seat) -> list[str]:
        legal = legal_text.legal_notation(self, state, seat)
        if legal and state.phase == PHASE_PLAY:  # the mover's moves
            # Kept for `_illegal`, which then finds a move by one scan of this tuple
            # instead of working out its giant's trap and walking its leap or its step
            # targets again (a room lists every position before a move is applied to
            # it). Barrier's lists too (~60 moves, ~0.5 KiB a playing room): its checks
            # cost ~20,000 instructions a move. A tuple copy (the caller owns the list):
            # a join and a text search cost more than comparing strs (lengths first).
            state.memo["legal"] = tuple(legal)
        return legal

    def _placements(self, state: CausewayState, colour: int) -> Iterator[Place]:
        """GC-B2 / GC-S1: beside any piece; a giant beside a stone that is not a giant."""
        near_any = sorted(frontier(state.stacks, state.giants))
        near_stone = [
            c for c in near_any if any(n in state.stacks for n in neighbours(c))
        ]
        for piece in notation.PIECES:
            if piece in state.setup_left[colour]:
                yield from (Place(piece, c) for c in (near_any if piece == BLANK_PIECE else near_stone))

    def _giant_actions(self, state: CausewayState, cell: Hex, colour: int) -> list[Action]:
        trapped = self.is_trapped(state, cell, colour)
        actions: list[Action] = []
        if state.supply[colour] > 0:
            actions.extend(Step(cell, to) for to in self.step_targets(state, cell, trapped))
        if not trapped:  # GC-B5 / GC-S3: a trapped giant never leaps
            split = split_without(state.stacks | state.giants, cell)
            for direction in range(6):
                actions.extend(self._leaps(state, cell, colour, direction, split))
        return actions

    # -- apply --------------------------------------------------------------------

    def apply(self, state: CausewayState, seat: Seat, action: Action) -> Transition[CausewayState]:
        if state.phase == PHASE_OVER:
            raise GameOverError("the game is over")
        if seat != state.to_move:
            raise NotYourTurnError(f"it is {COLOUR_NAMES[state.to_move]}'s turn (seat {state.to_move})")
        problem = self._illegal(state, seat, action)
        if problem is not None:
            try:
                text = notation.format_action(action)
            except (TypeError, IndexError):  # not even writable: name it as Python sees it
                text = repr(action)
            raise IllegalActionError(f"{text}: {problem}")
        # `Work.of(state)`, written out (one call fewer a move); a step lays a blank and
        # moves a giant (GC-B4 / GC-S2), so it is given the state's very maps of towers
        # won and destroyed, which it never writes (only drops and destroy steps do).
        # Steps and leaps (most moves) by their exact class first: no isinstance calls.
        kind = type(action)
        if kind is Step:
            work = Work(dict(state.stacks), dict(state.giants), list(state.supply), state.won, state.destroyed)
            self._do_step(work, seat, action)  # type: ignore[arg-type]
            return self._finish(state, work, action, 1 - seat, end=work.end)
        work = Work(dict(state.stacks), dict(state.giants), list(state.supply), dict(state.won),
                    dict(state.destroyed))
        if kind is Leap:
            self._do_leap(state, work, seat, action)  # type: ignore[arg-type]
            return self._finish(state, work, action, 1 - seat, end=work.end)
        if isinstance(action, Place):
            return self._after_place(state, work, action)
        if isinstance(action, Destroy):
            work.won.pop(action.cell)
            work.destroyed[action.cell] = seat
            work.events.append({"type": "destroy", "colour": COLOUR_NAMES[seat], "cell": cell_name(action.cell)})
            return self._finish(state, work, action, seat, end=state.end)
        if isinstance(action, Step):
            self._do_step(work, seat, action)
        elif isinstance(action, Leap):
            self._do_leap(state, work, seat, action)
        else:
            work.events.append({"type": "pass", "colour": COLOUR_NAMES[seat]})
        return self._finish(state, work, action, 1 - seat, end=work.end)

    def _illegal(self, state: CausewayState, seat: int, action: Action) -> str | None:
        """Why `action` is not legal now, or None if it is (checked without listing all)."""
        phase = state.phase
        if phase == PHASE_PLAY and seat == state.to_move:
            read = state.memo.get("read")  # the action `parse_action` read off a listed text?
            if read is not None and read[0] is action:
                return None
        kind = type(action)
        if (kind is Step or kind is Leap) and phase == PHASE_PLAY:  # most moves: found listed?
            listed = state.memo.get("legal")  # the position's list, if it was asked for
            if listed is not None and seat == state.to_move:
                text = _listed_text(action)  # type: ignore[arg-type]
                if text is not None and text in listed:  # (None is no entry)
                    return None
        if isinstance(action, Place):
            if phase != PHASE_SETUP:
                return "placements happen only during setup (GC-B2, GC-S1)"
            if not self._is_placement(state, seat, action):
                return "not a free setup piece on an empty cell next to the Causeway (a giant beside a stone)"
            return None
        if isinstance(action, Destroy):
            if phase != PHASE_DESTROY:
                return "a tower is destroyed only after running out of blanks (GC-B10)"
            return None if state.won.get(action.cell) == seat else "not one of your won towers"
        if phase != PHASE_PLAY:
            return f"the game is in its {phase} phase"
        if isinstance(action, Pass):
            return None if self.legal_actions(state, seat) == [PASS] else "you have a legal move"
        if not isinstance(action, Step | Leap):
            return "not a Giant's Causeway action"
        giant = state.giants.get(action.start)
        if giant is None or giant[0] != seat:
            return f"no {COLOUR_NAMES[seat]} giant on {cell_name(action.start)}"
        trapped = self.is_trapped(state, action.start, seat)
        if isinstance(action, Step):
            if state.supply[seat] <= 0:
                return "a step needs a blank in supply"
            if action.to not in self.step_targets(state, action.start, trapped):
                return "that giant cannot step there" + (" (it is trapped)" if trapped else "")
            return None
        if trapped:
            return "a trapped giant cannot leap"
        if not 0 <= action.direction < 6 or not self._is_leap(state, seat, action):
            return (
                "no such leap: it must run over leapable stacks to the first empty cell without "
                "splitting the Causeway, dropping on distinct open stacks passed over, in path order"
            )
        return None

    def _is_placement(self, state: CausewayState, colour: int, place: Place) -> bool:
        """Is `place` one of `_placements` (found without listing them)?"""
        cell, stacks, giants = place.cell, state.stacks, state.giants
        if type(cell) is not tuple or len(cell) != 2 or place.piece not in notation.PIECES:
            return place in set(self._placements(state, colour))
        if place.piece not in state.setup_left[colour] or cell in stacks or cell in giants:
            return False
        ring = neighbours(cell)
        if place.piece != BLANK_PIECE:
            return any(n in stacks for n in ring)  # GC-B2 / GC-S1: a giant beside a stone
        return any(n in stacks or n in giants for n in ring)

    def _do_step(self, work: Work, colour: int, step: Step) -> None:
        work.stacks[step.start] = BLANK[colour]  # the blank laid under the giant
        work.supply[colour] -= 1
        giant = work.giants[step.to] = work.giants.pop(step.start)
        event: dict[str, object] = {
            "type": "step", "colour": COLOUR_NAMES[colour],
            "from": known_name(step.start) or name(step.start), "to": known_name(step.to) or name(step.to),
        }
        if self.traps(giant[1]):  # GC-B4 / GC-S3: does it touch one opponent giant, now trapped?
            stacks, giants = work.stacks, work.giants
            touching: Hex | None = None
            for n in known_ring(step.to) or around(step.to):
                if n in stacks or n in giants:
                    if touching is not None:
                        break
                    touching = n
            else:
                if touching is not None and giants.get(touching, (colour,))[0] != colour:
                    event["traps"] = known_name(touching) or name(touching)
        work.events.append(event)

    # -- views --------------------------------------------------------------------

    # A leap's from, direction and drops are its notation; where it lands is in `giants`.
    restated_events: ClassVar[frozenset[str]] = frozenset({"place", "step", "leap"})

    def view_keys(self) -> tuple[str, ...]:
        return views.VIEW_KEYS

    def view_edits(self, state: CausewayState) -> tuple[ViewEdit, ...]:
        # The stacks' view, as the move's `views.next_stacks_part` changed it, and the
        # view itself, as `views.view_of` made it from the last position's (the last edit)
        memo = state.memo
        edit, whole = memo.get("edit"), memo.get("view_edit")
        if whole is None:
            return () if edit is None else (edit,)
        return (whole,) if edit is None else (edit, whole)

    def view(self, state: CausewayState, seat: Seat | None) -> View:
        # Perfect information: every seat and spectator gets the same document.
        return views.view_of(state, self.info.rules, self.SPECIAL_NAME, self.PLY_CAP)

    def state_from_view(self, view: View) -> CausewayState:
        return views.state_of(view, self.info.rules)

    # -- notation and persistence -------------------------------------------------

    def parse_action(self, state: CausewayState, seat: Seat, text: str) -> Action:
        action = notation.parse_action(text)
        listed = state.memo.get("legal")
        if listed is not None and text in listed:
            # A text of the mover's legal list (`legal_notation`) as it was written: the
            # action read off it is legal, and that text is its notation. Kept for the
            # `apply` and `format_action` of this very action object (a room parses a
            # move, applies it, then writes it down) instead of writing it again for
            # each (`_listed_text`, `notation.format_action`).
            state.memo["read"] = (action, text)
        return action

    def format_action(self, state: CausewayState, action: Action) -> str:
        read = state.memo.get("read")
        if read is not None and read[0] is action:
            text: str = read[1]
            return text
        return notation.format_action(action)

    def snapshot(self, state: CausewayState) -> dict[str, Any]:
        # The view plus what it leaves out: the seat to move ("turn", also once the game
        # is over) and the whole repetition history. `to_move` keeps the snapshot readable
        # by servers from before the view lost it.
        return {"game": "causeway", "schema": 1, "turn": state.to_move, **self.view(state, None),
                "to_move": None if state.phase == PHASE_OVER else COLOUR_NAMES[state.to_move],
                "history": [*state.history, views.digest(state)]}

    def restore(self, data: Mapping[str, Any]) -> CausewayState:
        if data.get("game") != "causeway" or data.get("schema") != 1:
            raise BadSnapshotError("not a Giant's Causeway snapshot (schema 1)")
        return views.state_of(dict(data), self.info.rules, snapshot=True)


def _listed_text(action: Step | Leap) -> str | None:
    """The action's notation, as `legal_notation` keeps its list, written with the names of the cells equal to the action's (`board.known_name`: a
    listed move's cells are named); None if some cell has no name (then it is not
    listed), the direction is not one of GC-1's six, or the drops are not a tuple of
    `Drop` (`_illegal` then checks the action the plain way)."""
    start = known_name(action.start)
    if start is None:
        return None
    if type(action) is Step:
        to = known_name(action.to)
        return None if to is None else start + ">" + to
    direction, drops = action.direction, action.drops  # type: ignore[union-attr]
    if type(direction) is not int or not 0 <= direction < 6 or type(drops) is not tuple:
        return None
    text = start + "^" + DIRECTION_NAMES[direction]
    for drop in drops:
        if type(drop) is not Drop:
            return None
        cell = known_name(drop.cell)
        if cell is None:
            return None
        text += "+" + cell
        if drop.choice is not None:
            choice = known_name(drop.choice)
            if choice is None:
                return None
            text += "/" + choice
    return text
