"""End of phase 4 (GI-24 returns) and phase 5 (GI-25 cleanup).

Returns: statues still in front of a screen go back to the quarry / clay pit; in turn
order, each owner with a marker behind the screen may mark them (`mark M7`, then
`pass` when done). Cleanup: figures, markers and logs go back automatically; then, in
turn order, each seat with markers on statues may take some back (`release M7`,
`pass` when done); then the first-player pawn moves on and a new turn starts.
"""

from __future__ import annotations

from engines.base import Event, IllegalActionError
from engines.giants.actions import Mark, Pass, Release
from engines.giants.state import AUCTION, CLEANUP, GameState

PENDING = -1


# ----------------------------------------------------------------------------- returns


def _returned(state: GameState, seat: int) -> list[str]:
    return [sid for sid, st in state.statues.items() if st.front == seat]


def _release_front(state: GameState, seat: int) -> None:
    for sid, st in list(state.statues.items()):
        if st.front == seat:
            state.own_statue(sid).front = None  # it already stands on Q or C


def start_returns(state: GameState, events: list[Event]) -> None:
    """GI-24: queue every owner of returned statues, in turn order.

    Whether the owner still has a marker behind the screen is private, so the queue
    does not depend on it: an owner without markers simply has only `pass`.
    """
    queue = []
    for seat in state.seat_order():
        if _returned(state, seat):
            events.append({"type": "returned", "seat": seat, "statues": _returned(state, seat)})
            queue.append(seat)
    state.order = queue
    _next_returns(state)


def _next_returns(state: GameState) -> None:
    while state.order:
        seat = state.order[0]
        if any(state.statues[s].marker is None for s in _returned(state, seat)):
            state.current = seat
            return
        _release_front(state, seat)
        state.order.pop(0)
    state.phase, state.current = CLEANUP, PENDING


def returns_actions(state: GameState, seat: int) -> list[object]:
    out: list[object] = []
    if state.seats[seat].markers > 0:
        out = [Mark(sid) for sid in _returned(state, seat) if state.statues[sid].marker is None]
    out.append(Pass())
    return out


def apply_returns(state: GameState, seat: int, action: object, events: list[Event]) -> None:
    if isinstance(action, Mark):
        st = state.statues.get(action.statue)
        if st is None or st.front != seat or st.marker is not None:
            raise IllegalActionError("mark one of your own returned, unmarked statues (GI-24)")
        p = state.seats[seat]
        if p.markers < 1:
            raise IllegalActionError("no marker behind your screen")
        p.markers -= 1
        state.own_statue(action.statue).marker = seat
        events.append({"type": "mark", "seat": seat, "statue": action.statue})
    elif isinstance(action, Pass):
        _release_front(state, seat)
        state.order.pop(0)
        events.append({"type": "pass", "seat": seat, "phase": "returns"})
    else:
        raise IllegalActionError("now only `mark <statue>` or `pass`")
    _next_returns(state)


# ----------------------------------------------------------------------------- cleanup


def _marked(state: GameState, seat: int) -> list[str]:
    return [sid for sid, st in state.statues.items() if st.marker == seat]


def start_cleanup(state: GameState, events: list[Event]) -> None:
    """GI-25: everything goes back behind the screens; then the release choices."""
    board: dict[tuple[int, int], dict[str, list[int]]] = {}
    for cell, tokens in state.board.items():
        for token, (count, _used) in tokens.items():
            kind = token[0]
            if kind == "l":
                continue  # logs on the board leave the game
            if kind == "n":
                if len(token) > 1:
                    state.seats[int(token[1:])].markers += count
                entry = board.setdefault(cell, {}).setdefault("n", [0, 0])
                entry[0] += count  # 2 players: neutral workers stay where they are
                continue
            p = state.seats[int(token[1:])]
            if kind == "w":
                p.workers += count
            elif kind == "s":
                p.sorcerer = True
            else:
                p.chief = True
    state.board = board
    for p in state.seats:
        p.markers += p.front_markers
        p.workers += p.front_workers
        p.chief = p.chief or p.front_chief
        p.front_markers = p.front_workers = p.spent_workers = 0
        p.front_chief = p.spent_chief = False
        p.bid = None
    events.append({"type": "cleanup", "turn": state.turn})
    state.phase = CLEANUP
    state.order = [s for s in state.seat_order() if _marked(state, s)]
    _next_cleanup(state)


def _next_cleanup(state: GameState) -> None:
    while state.order:
        seat = state.order[0]
        if _marked(state, seat):
            state.current = seat
            return
        state.order.pop(0)
    state.first = (state.first + 1) % state.players
    state.turn += 1
    state.phase, state.current = AUCTION, PENDING


def cleanup_actions(state: GameState, seat: int) -> list[object]:
    out: list[object] = [Release(sid) for sid in _marked(state, seat)]
    out.append(Pass())
    return out


def apply_cleanup(state: GameState, seat: int, action: object, events: list[Event]) -> None:
    if isinstance(action, Release):
        st = state.statues.get(action.statue)
        if st is None or st.marker != seat:
            raise IllegalActionError("release only a statue carrying your marker (GI-25)")
        state.own_statue(action.statue).marker = None
        state.seats[seat].markers += 1
        events.append({"type": "release", "seat": seat, "statue": action.statue})
    elif isinstance(action, Pass):
        state.order.pop(0)
        events.append({"type": "pass", "seat": seat, "phase": "cleanup"})
    else:
        raise IllegalActionError("now only `release <statue>` or `pass`")
    _next_cleanup(state)
