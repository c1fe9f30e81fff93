"""Giant's Causeway: what follows a move — the next state, the end of the game.

`CausewayEngine` (engines.causeway.engine) inherits `Finishing`: `apply` plays a
placement, a step, a leap, a destroy or a pass into a `Work` and hands it here.
`_after_place` ends a setup placement (GC-B2, GC-S1); `_finish` ends every other move:
the end conditions (three towers, running out of blanks, GC-B9/B10, GC-S7, GC-Q2) and
the guards (repetition, the ply limit, two passes: GC-B11, GC-S7), then the next
immutable `CausewayState` with the view parts it keeps (`pass_on`,
`views.next_stacks_part`). `outcome` scores a finished game with the rule set's
`result_key` and `score`.
"""

from __future__ import annotations

from typing import ClassVar

from engines.base import Outcome, Seat, Transition
from engines.causeway import views
from engines.causeway.board import (
    BLANK,
    BLANK_PIECE,
    COLOUR_NAMES,
    PHASE_DESTROY,
    PHASE_OVER,
    PHASE_PLAY,
    PHASE_SETUP,
    CausewayState,
    Hex,
    Work,
    carry_frontier,
    cell_name,
    key_of,
)
from engines.causeway.notation import Action, Destroy, Leap, Pass, Place, Step

REASONS = {
    "three_towers": "three towers",
    "three_stacks": "three height-3 stacks",
    "out_of_stones": "a player ran out of blanks",
    "repetition": "a position occurred a third time",
    "ply_limit": "the ply limit",
    "two_passes": "two passes in a row",
}


class Finishing:
    """Mixin for CausewayEngine: the state after a move, and the game's outcome."""

    PLY_CAP: ClassVar[int]

    # The rule set's hooks for the end of the game (the others are CausewayEngine's).
    def move_end(self, work: Work, mover: int) -> str | None:
        """An end reason checked after a whole move (GC-B10); None by default."""
        return None

    def needs_destroy(self, work: Work, mover: int) -> bool:
        """Must `mover` destroy one of its towers before the game ends (GC-B10)?"""
        return False

    def score(self, state: CausewayState, colour: int) -> float:
        raise NotImplementedError

    def result_key(self, state: CausewayState, colour: int) -> tuple[int, ...]:
        """The final comparison, best first (towers, then a tie-break)."""
        raise NotImplementedError

    def _after_place(self, state: CausewayState, work: Work, place: Place) -> Transition[CausewayState]:
        colour = state.to_move
        if place.piece == BLANK_PIECE:
            work.stacks[place.cell] = BLANK[colour]
            work.supply[colour] -= 1
        else:
            work.giants[place.cell] = (colour, place.piece)
        left = list(state.setup_left[colour])
        left.remove(place.piece)
        setup_left = (tuple(left), state.setup_left[1]) if colour == 0 else (state.setup_left[0], tuple(left))
        work.events.append(
            {"type": "place", "colour": COLOUR_NAMES[colour], "piece": place.piece, "cell": cell_name(place.cell)}
        )
        phase = PHASE_SETUP if any(setup_left) else PHASE_PLAY
        supply = (work.supply[0], work.supply[1])
        stacks = work.stacks if place.piece == BLANK_PIECE else state.stacks
        part, edit = views.next_stacks_part(state, stacks, (place.cell,))
        after = CausewayState(  # the map not placed on stays the state's very object (see _finish)
            stacks,
            state.giants if place.piece == BLANK_PIECE else work.giants,
            supply,
            setup_left,
            state.won,
            state.destroyed,
            1 - colour,
            phase,
            state.ply + 1,
            state.passes,
            (),  # a stone or a giant was added: no earlier position can recur
            state.end,
        )
        pass_on(state, after)
        after.memo["stacks"] = part
        if edit is not None:  # for the room's diff (view_edits)
            after.memo["edit"] = edit
        carry_frontier(state, after, (place.cell,), ())
        return Transition(after, tuple(work.events))

    def _finish(
        self, state: CausewayState, work: Work, action: Action, to_move: int, end: str | None
    ) -> Transition[CausewayState]:
        """Bookkeeping after a move: end conditions, then the guards (GC-B10/B11, GC-S7)."""
        mover = state.to_move
        supply = (work.supply[0], work.supply[1])
        kind = type(action)  # parse_action's exact classes: one `is` each, no isinstance call
        if kind is not Step and kind is not Leap and kind is not Pass and kind is not Destroy:
            kind = _action_class(action)
        passes = state.passes + 1 if kind is Pass else 0
        ply = state.ply + 1
        changed = _stacks_changed(action, kind)
        # A step lays a blank (GC-B4 / GC-S2) and every drop adds a stone or tops a tower
        # (GC-B6 / B7, GC-S5 / S6, GC-Q1): the stacks changed exactly when the move names
        # a cell, so the maps (~20-60 entries) are not compared
        stacks = work.stacks if changed else state.stacks
        part, edit = views.next_stacks_part(state, stacks, changed)
        history: tuple[str, ...] = ()  # if a stone was added: earlier positions are gone for good
        if stacks is state.stacks:
            history = (*state.history, views.digest(state))
        elif kind is not Step:  # a step lays a blank (GC-B4 / GC-S2): added
            # Did the move add a stone (it can move a barrier or turn a spellstone, GC-B7 /
            # GC-S6, but never take one off)? Counted on the cells it changed, which
            # `changed` names (a drop's cell may come again as a later drop's choice).
            before = state.stacks
            cells = changed if len(changed) < 2 else set(changed)
            if not sum([len(stacks[c]) - len(before.get(c, "")) for c in cells]):
                history = (*state.history, views.digest(state))
        key: str | None = None  # this position's digest, worked out only if it can be a third repetition
        phase = PHASE_PLAY
        if kind is Destroy:
            phase = PHASE_OVER
        elif end is None:
            end = self.move_end(work, mover)
            if end is not None and self.needs_destroy(work, mover):
                phase, to_move = PHASE_DESTROY, mover
            elif end is None:
                if len(history) >= 2 and history.count(key := key_of(
                        part[1], work.giants, supply, to_move, views.key_text(state.memo, part[1])
                        if stacks is state.stacks else None)) >= 2:
                    end = "repetition"
                elif ply >= self.PLY_CAP:
                    end = "ply_limit"
                elif passes >= 2:
                    end = "two_passes"
        if end is not None and phase == PHASE_PLAY:
            phase = PHASE_OVER
        # A map the move left as it was stays the state's very object: the view of it is
        # then the last view's object too (views.view_of), passed by the diff unread.
        after = CausewayState(  # by position: keywords cost twice as much to pass, once a move
            stacks,
            # a step or a leap moves a giant (GC-B4 / GC-S2, GC-B5 / GC-S4), nothing else does
            work.giants if kind is Step or kind is Leap else state.giants,
            supply,
            state.setup_left,
            state.won if work.won is state.won or work.won == state.won else work.won,
            state.destroyed if work.destroyed is state.destroyed or work.destroyed == state.destroyed
            else work.destroyed,
            to_move,
            phase,
            ply,
            passes,
            history,
            end,
        )
        pass_on(state, after)
        after.memo["stacks"] = part
        if edit is not None:  # for the room's diff (view_edits)
            after.memo["edit"] = edit
        if kind is Step or kind is Leap:  # the view's entries it may change (views.MOVED_BY)
            after.memo["moved"] = views.MOVED_BY[
                (kind is Leap) | (phase != state.phase or end != state.end) << 1
                | (passes != state.passes) << 2 | (history != state.history) << 3]
        if key is not None:
            after.memo["key"] = key
        if stacks is state.stacks:  # the stacks' view too: its key text, if kept, goes on
            text = state.memo.get("text")
            if text is not None:
                after.memo["text"] = text
        if "frontier" in state.memo:  # kept for barrier's steps: the cells filled or emptied
            if kind is Step:
                carry_frontier(state, after, (action.to,), ())  # type: ignore[union-attr]
            elif kind is Leap:
                landing = [c for c in after.giants if c not in state.giants]
                carry_frontier(state, after, tuple(landing), (action.start,))  # type: ignore[union-attr]
            else:
                carry_frontier(state, after, (), ())
        if phase == PHASE_DESTROY:
            work.events.append({"type": "destroy_due", "colour": COLOUR_NAMES[mover]})
        elif phase == PHASE_OVER:
            outcome = self.outcome(after)
            assert outcome is not None
            work.events.append({"type": "game_end", **outcome.to_data()})
        return Transition(after, tuple(work.events))

    # -- outcome ------------------------------------------------------------------

    def outcome(self, state: CausewayState) -> Outcome | None:
        if state.phase != PHASE_OVER or state.end is None:
            return None
        # Made once a finished position: the move's game_end event and the room ask for it
        # (the scores walk every stack, GC-Q2 each stone, ~25,000 instructions a time)
        found: Outcome | None = state.memo.get("outcome")
        if found is not None:
            return found
        keys = [self.result_key(state, c) for c in (0, 1)]
        scores = (self.score(state, 0), self.score(state, 1))
        if keys[0] == keys[1]:
            winners: tuple[Seat, ...] = (0, 1)
            detail = f"drawn after {REASONS[state.end]}"
        else:
            winner = 0 if keys[0] > keys[1] else 1
            winners = (winner,)
            detail = f"{COLOUR_NAMES[winner]} wins after {REASONS[state.end]}"
        detail += f" ({scores[0]:g}-{scores[1]:g})"
        found = state.memo["outcome"] = Outcome(scores=scores, winners=winners, reason=state.end, detail=detail)
        return found


def _action_class(action: Action) -> type:
    """The class of the five `action` is an instance of (a subclass's base), for `_finish`,
    which tells moves apart by their exact class."""
    for kind in (Step, Leap, Pass, Destroy, Place):
        if isinstance(action, kind):
            return kind
    return type(action)


def _stacks_changed(action: Action, kind: type) -> tuple[Hex, ...]:
    """The cells whose stacks `action` (of class `kind`, `_action_class`) may change or add
    (`views.next_stacks_part`): the blank laid under a stepping giant (GC-B4 / GC-S2), a
    leap's drops and the towers its choices take a barrier from or turn a spellstone on
    (GC-B6 / B7, GC-S5 / S6)."""
    if kind is Step:
        return (action.start,)  # type: ignore[union-attr]
    if kind is Leap:
        return tuple(c for d in action.drops for c in (d.cell, d.choice) if c is not None)  # type: ignore[union-attr]
    return ()


def pass_on(before: CausewayState, after: CausewayState) -> None:
    """Hand `after` the view parts `before` kept for the maps it passes on unchanged (the
    stacks' part is the caller's: `views.next_stacks_part`), and `before`'s view, which
    `after`'s is then an edit of. Written out map by map: a loop over the memo with
    `getattr` cost twice as much, once a move."""
    kept, memo = before.memo, after.memo
    entry = kept.get("view")
    if entry is not None:  # `after`'s view is made as an edit of it (views.view_of)
        memo["last"] = entry
    entry = kept.get("giants")
    if entry is not None and entry[0] is after.giants:
        memo["giants"] = entry
    entry = kept.get("won")
    if entry is not None and entry[0] is after.won:
        memo["won"] = entry
    entry = kept.get("destroyed")
    if entry is not None and entry[0] is after.destroyed:
        memo["destroyed"] = entry
