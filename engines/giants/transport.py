"""Phase 4: transport, erecting, headdresses, marking, looking under (GI-18 … GI-24).

A statue moves along a path that never repeats a hex, carried in each hex by pieces
not yet used this turn (GI-18); the pieces used in one hex are independent of the
others, so the default assignment is chosen hex by hex (`engines.giants.strength`)
and the cheapest route to every destination is a shortest-path search over those
per-hex costs (`routes`). The legal list writes every statue's destinations as
notation (`notation`); `apply` plays a transport, an erection, a headdress, a mark or
a look under.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from typing import Any, cast

from engines.base import Event, IllegalActionError
from engines.giants.actions import Crown, Erect, Look, Mark, Pass, Transport
from engines.giants.board import ISLAND, Hex, format_hex, hex_key
from engines.giants.placement import next_seat
from engines.giants.state import RETURNS, GameState, Statue
from engines.giants.strength import (
    ZERO,
    Cost,
    Units,
    best_use,
    check_use,
    enter_costs,
    hex_cost,
    hex_pieces,
    unit_keys,
)


def start(state: GameState) -> None:
    """Phase 4 starts with the first player; every piece is fresh (GI-18)."""
    state.passed = [False] * state.players
    state.current = state.first


def may_move(statue: Statue, seat: int) -> bool:
    """GI-18: in front of your screen, marked by you, or unmarked on the board."""
    if statue.front is not None:
        return statue.front == seat
    return statue.marker is None or statue.marker == seat


def routes(
    state: GameState, sid: str, mover: int, enter: dict[Hex, Cost] | None = None
) -> dict[Hex, list[Hex]]:
    """Cheapest path (by default assignment) to every hex the statue can reach.

    `enter` may pass `enter_costs` for the statue's size, shared by same-size statues.
    """
    statue = state.statues[sid]
    if enter is None:
        enter = enter_costs(state, mover, statue.size)
    return _routes_from(statue.hex, enter)


_UNKNOWN: Any = object()  # an entering cost not worked out yet (`_routes_from`'s `fill`)


def _routes_from(start_hex: Hex, enter: Mapping[Hex, Cost | None],
                 fill: Callable[[Hex], Cost | None] | None = None) -> dict[Hex, list[Hex]]:
    """`routes` of a statue on `start_hex` whose size gave `enter`. With `fill`, `enter`
    holds the costs worked out so far (None: too weak) and `fill` works out the cost of a
    hex not in it, which is kept there: a search looks at a few hexes of the board only."""
    best, parent, _ = _search(start_hex, enter, fill)
    out: dict[Hex, list[Hex]] = {}
    for cell in best:
        if cell == start_hex:
            continue
        path = [cell]
        while path[-1] != start_hex:
            path.append(parent[path[-1]])
        out[cell] = path[::-1]
    return out


def _search(start_hex: Hex, enter: Mapping[Hex, Cost | None], fill: Callable[[Hex], Cost | None] | None,
            ) -> tuple[dict[Hex, Cost], dict[Hex, Hex], list[Hex]]:
    """`_routes_from`'s search (Dijkstra over entering costs): the least cost of every hex
    reached (the start's ZERO first), each one's previous hex, and the hexes reached in
    the order their cost was settled, so each after its previous hex (costs never
    decrease along a route: every entering cost is >= ZERO, entry by entry)."""
    best: dict[Hex, Cost] = {start_hex: ZERO}
    parent: dict[Hex, Hex] = {}
    settled: list[Hex] = []
    heap: list[tuple[Cost, Hex]] = [(ZERO, start_hex)]
    neighbors = ISLAND.neighbors
    kept = cast("dict[Hex, Cost | None]", enter)  # `fill`'s callers pass a dict
    while heap:
        cost, cell = heapq.heappop(heap)
        if best[cell] is not cost:  # a hex's cost only ever falls, each time a new tuple
            continue
        settled.append(cell)
        for nb in neighbors[cell]:
            step = enter.get(nb, _UNKNOWN)
            if step is _UNKNOWN:
                if fill is None:
                    continue
                step = kept[nb] = fill(nb)
            if step is None:
                continue
            # (the start, ZERO in `best`, is never bettered: every entering cost enters
            # at least one piece)
            new = (cost[0] + step[0], cost[1] + step[1], cost[2] + step[2], cost[3] + step[3])
            old = best.get(nb)
            if old is None or new < old:
                best[nb] = new
                parent[nb] = cell
                heapq.heappush(heap, (new, nb))
    del settled[0]  # the start
    return best, parent, settled


def _worker_next_to(state: GameState, seat: int, ahu_id: str) -> bool:
    token = f"w{seat}"
    return any(
        state.board.get(cell, {}).get(token, (0, 0))[0] > 0
        for cell in ISLAND.ahu_by_id[ahu_id].adjacent
    )


def actions(state: GameState, seat: int) -> list[object]:
    """A canonical list: every reachable destination of every statue the seat may move
    (cheapest route, default pieces), erects, headdresses, marks, looks, pass."""
    return _collect(state, seat, False)


def notation(state: GameState, seat: int) -> list[str]:
    """`actions` in notation, in the same order, written directly (no action objects)."""
    return _collect(state, seat, True)


# Every land hex in notation, written once (transport paths are made of them).
_HEX_TEXT = {cell: format_hex(cell) for cell in ISLAND.land_order}
# A route's step onto each land hex in notation, and each land hex's place in the
# listing order (`_row_col`'s): a search reaches land hexes only (`ISLAND.neighbors`).
_STEP_TEXT = {cell: ">" + text for cell, text in _HEX_TEXT.items()}
_LAND_RANK = {cell: i for i, cell in enumerate(ISLAND.land_order)}


def _row_col(cell: Hex) -> tuple[int, int]:
    return cell[1], cell[0]


def _collect(state: GameState, seat: int, text: bool) -> list[Any]:
    p = state.seats[seat]
    out: list[Any] = []
    statues = state.statues
    # may_move, inlined (GI-18): in front of the seat's screen, or on the board unmarked
    # or marked by it; in listing order (the statue ids' order, `_sid_key`)
    sids = [sid for sid, statue in statues.items()
            if (statue.front == seat if statue.front is not None else statue.marker is None or statue.marker == seat)]
    if len(sids) > 1:
        sort_sids(sids)
    # Entering costs per size, worked out for the hexes the searches look at (a few of
    # the board's): each hex's pieces sorted out once for all sizes (enter_costs_by_size,
    # lazily).
    board, players, keys = state.board, state.players, unit_keys(seat, state.players)
    pieces: dict[Hex, tuple[Units, int, list[tuple[bool, str]]] | None] = {}
    costs: dict[int, dict[Hex, Cost | None]] = {}
    fills: dict[int, Callable[[Hex], Cost | None]] = {}

    def fill_for(size: int) -> Callable[[Hex], Cost | None]:
        def fill(cell: Hex) -> Cost | None:
            found = pieces.get(cell, _UNKNOWN)
            if found is _UNKNOWN:
                tokens = board.get(cell)
                found = pieces[cell] = hex_pieces(tokens, seat, players, keys) if tokens else None
            if found is None or (not found[1] and not found[2]):
                return None
            return hex_cost(found[0], found[1], found[2], size)
        return fill

    # Statues of one size on one hex (the Moai in front of a screen all stand at Q)
    # reach the same hexes by the same routes: found once, in listing order, as
    # notation or as path tuples. Most phase-4 lists are short (a seat's pieces used
    # up: the searches reach nothing), so a statue without a route or an Ahu beside it
    # costs a look-up.
    reached: dict[tuple[Hex, int], list[Any]] = {}
    ahu_near = ISLAND.ahu_near
    for sid in sids:
        statue = statues[sid]
        at = statue.hex
        paths = reached.get((at, statue.size))
        if paths is None:
            size = statue.size
            if size not in costs:
                costs[size], fills[size] = {}, fill_for(size)
            if text:
                # Each route's text is its previous hex's route text and one step (the
                # search settles a hex after its previous one): no route walked back
                _, parent, settled = _search(at, costs[size], fills[size])
                paths = []
                if settled:
                    texts = {at: _HEX_TEXT.get(at) or format_hex(at)}
                    for cell in settled:
                        texts[cell] = texts[parent[cell]] + _STEP_TEXT[cell]
                    paths = list(map(texts.__getitem__, sorted(settled, key=_LAND_RANK.__getitem__)))
            else:
                reach = _routes_from(at, costs[size], fills[size])
                paths = [tuple(reach[cell]) for cell in sorted(reach, key=_row_col)]
            reached[at, size] = paths
        if paths:
            if text:
                head = f"transport {sid} "
                out += [head + path for path in paths]
            else:
                out += [Transport(sid, path, None) for path in paths]
        near = ahu_near.get(at)
        if near is None:
            continue
        for ahu_id in near:
            st = state.ahu[ahu_id]
            if not _worker_next_to(state, seat, ahu_id):
                continue
            free = st.size == 0 and st.reserved in (None, seat)
            if statue.kind == "M" and free and (st.reserved == seat or p.bases > 0):
                out.append(f"erect {sid} {ahu_id}" if text else Erect(sid, ahu_id))
            if statue.kind == "H" and st.size > 0 and not st.headdress:
                out.append(f"headdress {sid} {ahu_id}" if text else Crown(sid, ahu_id))
    if p.markers > 0:
        for sid in sids:  # (a statue one may mark is one the seat may move)
            statue = statues[sid]
            if statue.front is None and statue.marker is None:
                out.append(f"mark {sid}" if text else Mark(sid))
    if p.tablets > 0:
        for ahu in ISLAND.ahu:
            st = state.ahu[ahu.id]
            if st.size and st.owner != seat and ahu.id not in p.looked:
                out.append(f"look {ahu.id}" if text else Look(ahu.id))
    out.append("pass" if text else Pass())
    return out


def _sid_key(sid: str) -> tuple[str, int]:
    return (sid[0], int(sid[1:]))


def sort_sids(sids: list[str]) -> None:
    """Sort statue ids in place in listing order (`_sid_key`: kind, then number)."""
    try:
        sids.sort(key=_SID_RANKS.__getitem__)
    except _NoRank:
        sids.sort(key=_sid_key)


class _NoRank(Exception):
    """A statue id whose `_sid_key` has no `_SID_RANKS` int (never one the engine makes)."""


class _SidRanks(dict[str, int]):
    """`_sid_key` of each statue id seen as one int in the same order (the kind's code
    point, then the number), so sorting the statues calls no Python function per id and
    compares ints, not tuples (a game makes a few dozen ids: M1.., H1..); emptied when it
    reaches _SID_RANKS_MAX. Raises _NoRank for a number outside 0..2**40-1."""

    def __missing__(self, sid: str) -> int:
        kind, number = _sid_key(sid)
        if not 0 <= number < _NUMBERS:
            raise _NoRank(sid)
        if len(self) >= _SID_RANKS_MAX:
            self.clear()
        rank = self[sid] = (ord(kind) << 40) + number
        return rank


_NUMBERS = 1 << 40
_SID_RANKS = _SidRanks()
_SID_RANKS_MAX = 1024


def _statue(state: GameState, sid: str, seat: int) -> Statue:
    statue = state.statues.get(sid)
    if statue is None:
        raise IllegalActionError(f"no statue {sid} is waiting to be moved")
    if not may_move(statue, seat):
        raise IllegalActionError(f"{sid} is not yours to move (GI-18)")
    return statue


def apply_transport(state: GameState, seat: int, a: Transport, events: list[Event]) -> None:
    statue = _statue(state, a.statue, seat)
    path = a.path
    if len(path) < 2 or path[0] != statue.hex:
        raise IllegalActionError(f"the path must start where {a.statue} stands and move")
    if len(set(path)) != len(path):
        raise IllegalActionError("a path never repeats a hex (GI-18)")
    if a.uses is not None and len(a.uses) != len(path) - 1:
        raise IllegalActionError("name the pieces for each entered hex, or for none")
    plan: list[tuple[Hex, tuple[str, ...], dict[int, int]]] = []
    for i, cell in enumerate(path[1:]):
        if cell not in ISLAND.neighbors.get(path[i], ()):
            raise IllegalActionError(f"{cell} is not a land hex next to {path[i]}")
        tokens = state.board.get(cell, {})
        named = a.uses[i] if a.uses is not None else None
        if named is None:
            found = best_use(tokens, seat, statue.size, state.players)
            if found is None:
                raise IllegalActionError(f"too little strength at {cell} for size {statue.size}")
            named = found[1]
        plan.append((cell, named, check_use(tokens, named, seat, statue.size)))
    scored: dict[str, int] = {}
    for cell, use, points in plan:
        tokens = state.own_hex(cell)
        for token in use:
            tokens[token][1] += 1
        for owner, pts in points.items():
            state.seats[owner].points += pts
            scored[str(owner)] = scored.get(str(owner), 0) + pts
    statue = state.own_statue(a.statue)
    statue.hex = path[-1]
    statue.front = None
    events.append({
        "type": "transport", "seat": seat, "statue": a.statue,
        "path": [hex_key(c) for c in path], "uses": [list(u) for _, u, _ in plan],
        "points": scored,
    })


def _finish_statue(state: GameState, sid: str) -> None:
    statue = state.statues.pop(sid)
    if statue.marker is not None:
        state.seats[statue.marker].markers += 1  # the marker's job is done


def apply_erect(state: GameState, seat: int, a: Erect, events: list[Event]) -> None:
    statue = _statue(state, a.statue, seat)
    ahu = ISLAND.ahu_by_id.get(a.ahu)
    if statue.kind != "M" or ahu is None or statue.hex not in ahu.adjacent:
        raise IllegalActionError("erect a Moai standing next to that Ahu (GI-20)")
    st = state.ahu[ahu.id]
    if st.size or st.reserved not in (None, seat):
        raise IllegalActionError(f"{ahu.id} is taken or reserved by someone else")
    if not _worker_next_to(state, seat, ahu.id):
        raise IllegalActionError("one of your workers must stand next to the Ahu")
    p = state.seats[seat]
    if st.reserved is None:
        if p.bases < 1:
            raise IllegalActionError("no base behind your screen")
        p.bases -= 1
    st = state.own_ahu(ahu.id)
    st.reserved, st.owner, st.size = None, seat, statue.size
    _finish_statue(state, a.statue)
    # The base goes colour side down: the event does not say whose it is (GI-28).
    events.append({"type": "erect", "statue": a.statue, "ahu": ahu.id, "size": statue.size})


def apply_crown(state: GameState, seat: int, a: Crown, events: list[Event]) -> None:
    statue = _statue(state, a.statue, seat)
    ahu = ISLAND.ahu_by_id.get(a.ahu)
    if statue.kind != "H" or ahu is None or statue.hex not in ahu.adjacent:
        raise IllegalActionError("place a headdress standing next to that Ahu (GI-21)")
    st = state.ahu[ahu.id]
    if not st.size or st.headdress:
        raise IllegalActionError(f"{ahu.id} has no erected Moai without a headdress")
    if not _worker_next_to(state, seat, ahu.id):
        raise IllegalActionError("one of your workers must stand next to the Ahu")
    state.own_ahu(ahu.id).headdress = True
    _finish_statue(state, a.statue)
    events.append({"type": "headdress", "seat": seat, "statue": a.statue, "ahu": ahu.id})


def apply_mark(state: GameState, seat: int, a: Mark, events: list[Event]) -> None:
    statue = state.statues.get(a.statue)
    if statue is None or statue.front is not None or statue.marker is not None:
        raise IllegalActionError("mark an unmarked statue on the board (GI-22)")
    p = state.seats[seat]
    if p.markers < 1:
        raise IllegalActionError("no marker behind your screen")
    p.markers -= 1
    state.own_statue(a.statue).marker = seat
    events.append({"type": "mark", "seat": seat, "statue": a.statue})


def apply_look(state: GameState, seat: int, a: Look, events: list[Event]) -> None:
    st = state.ahu.get(a.ahu)
    p = state.seats[seat]
    if st is None or not st.size:
        raise IllegalActionError("look under an erected Moai (GI-23)")
    if st.owner == seat or a.ahu in p.looked:
        raise IllegalActionError("you already know whose base that is")
    if p.tablets < 1:
        raise IllegalActionError("looking costs 1 half-tablet")
    p.tablets -= 1
    state.tablets += 1
    p.looked = [*p.looked, a.ahu]  # a new list: `successor`'s players share the last state's (Player.clone)
    # Only the payer learns the owner: it appears in that seat's view, not here.
    events.append({"type": "look", "seat": seat, "ahu": a.ahu})


def apply(state: GameState, seat: int, action: object, events: list[Event]) -> None:
    """Apply one phase-4 action of the current seat, then pass the turn on."""
    if isinstance(action, Transport):
        apply_transport(state, seat, action, events)
    elif isinstance(action, Erect):
        apply_erect(state, seat, action, events)
    elif isinstance(action, Crown):
        apply_crown(state, seat, action, events)
    elif isinstance(action, Mark):
        apply_mark(state, seat, action, events)
    elif isinstance(action, Look):
        apply_look(state, seat, action, events)
    elif isinstance(action, Pass):
        state.passed[seat] = True
        events.append({"type": "pass", "seat": seat, "phase": "transport"})
    else:
        raise IllegalActionError("not a transport-phase action")
    next_seat(state, seat, RETURNS)
