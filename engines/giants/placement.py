"""Phase 3: placement (GI-12 … GI-17), one action per seat in turn, until all have passed.

Functions mutate a state the engine has already cloned; when every seat has passed
the phase moves to transport (`state.current = PENDING`, entered by `flow.settle`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engines.base import Event, IllegalActionError, NotationList
from engines.giants.actions import Neutral, Pass, Place, Power, Tablet, format_action
from engines.giants.board import ISLAND, Hex, hex_key
from engines.giants.state import TRANSPORT, GameState

PENDING = -1
CHIEF_POWER_COST = 2  # GI-14: half-tablets

# Placement actions do not depend on the state beyond "which figure, how many logs",
# so build them once: legal lists are then concatenations of shared tuples.
_PLACE: dict[tuple[str, int], tuple[Place, ...]] = {
    (figure, logs): tuple(Place(figure, cell, logs) for cell in ISLAND.land_order)
    for figure in ("worker", "sorcerer", "chief")
    for logs in range(3)
    if figure != "chief" or logs == 0
}
_NEUTRAL_NEW = tuple(Neutral(None, cell) for cell in ISLAND.land_order)
_NEUTRAL_MOVE = {
    src: tuple(Neutral(src, cell) for cell in ISLAND.land_order) for src in ISLAND.land_order
}
# The same in notation (`notation`: a legal list in a room is its strings).
_PLACE_TEXT = {key: tuple(map(format_action, acts)) for key, acts in _PLACE.items()}
_NEUTRAL_NEW_TEXT = tuple(map(format_action, _NEUTRAL_NEW))
_NEUTRAL_MOVE_TEXT = {src: tuple(map(format_action, acts)) for src, acts in _NEUTRAL_MOVE.items()}
_TABLET, _PASS = Tablet(), Pass()


def start(state: GameState) -> None:
    """Placement starts with the first player (phase 3)."""
    state.passed = [False] * state.players
    state.current = state.first


def _powers(state: GameState, seat: int, figure: str, text: bool) -> list[Any]:
    """The powers `figure` may use (GI-14), as actions or (`text`) their notation."""
    p = state.seats[seat]
    made = _POWER_TEXT[figure] if text else _POWER[figure]
    out: list[Any] = []
    if p.reserve_workers > 0:
        out.append(made["village"])
    if p.reserve_markers > 0:
        out.append(made["hut"])
    forests = state.forests
    # The forest hexes in listing order (a state's forests are the map's: the whole
    # island is walked only for a state that holds others).
    order = _FOREST_ORDER if forests.keys() <= _FOREST_SET else ISLAND.land_order
    for cell in order:
        if forests.get(cell, 0) > 0:
            out.append(made[cell])
    if p.bases > 0:
        ahu = state.ahu
        for site in ISLAND.ahu:
            st = ahu[site.id]
            if st.reserved is None and st.size == 0:
                out.extend(made[site.id])
    if state.headdresses > 0:
        out.append(made["clay"])
    return out


_FOREST_SET = frozenset(ISLAND.forests)
_FOREST_ORDER = tuple(cell for cell in ISLAND.land_order if cell in _FOREST_SET)
_LAND_INDEX = {cell: i for i, cell in enumerate(ISLAND.land_order)}


def _power_table(figure: str) -> dict[Any, Any]:
    """Every power action of `figure`, keyed by power (village, hut, clay), forest hex
    or Ahu id (a tuple: one action per adjacent hex)."""
    table: dict[Any, Any] = {
        "village": Power(figure, "village", ISLAND.village), "hut": Power(figure, "hut", ISLAND.hut),
        "clay": Power(figure, "clay", ISLAND.clay_pit),
    }
    table.update((cell, Power(figure, "forest", cell)) for cell in ISLAND.land_order)
    table.update((site.id, tuple(Power(figure, "reserve", cell, site.id) for cell in site.adjacent))
                 for site in ISLAND.ahu)
    return table


_POWER = {figure: _power_table(figure) for figure in ("sorcerer", "chief")}
_POWER_TEXT = {
    figure: {key: tuple(map(format_action, a)) if isinstance(a, tuple) else format_action(a) for key, a in table.items()}
    for figure, table in _POWER.items()
}


def actions(state: GameState, seat: int) -> list[object]:
    """Every placement action of `seat` (complete: at most a few hundred)."""
    return _collect(state, seat, False)


def notation(state: GameState, seat: int) -> NotationList:
    """`actions` in notation, in the same order, from strings written once: a
    NotationList whose runs are the tables' tuples (and the powers' list)."""
    runs = _runs(state, seat, True)
    out = NotationList()
    for run in runs:
        out += run
    out.runs = runs
    return out


def _collect(state: GameState, seat: int, text: bool) -> list[Any]:
    out: list[Any] = []
    for run in _runs(state, seat, text):
        out += run
    return out


def _runs(state: GameState, seat: int, text: bool) -> tuple[Sequence[Any], ...]:
    # The legal list (GI-12..GI-17) as the runs it is made of, in order: tuples of the
    # tables (never changed), and the powers' list.
    place, neutral_new, neutral_move = (
        (_PLACE_TEXT, _NEUTRAL_NEW_TEXT, _NEUTRAL_MOVE_TEXT) if text else (_PLACE, _NEUTRAL_NEW, _NEUTRAL_MOVE))
    p = state.seats[seat]
    out: list[Sequence[Any]] = []
    logs = min(2, p.logs)
    if p.workers > 0:
        out += (place[("worker", 0)], place[("worker", 1)], place[("worker", 2)])[:logs + 1]
    if p.sorcerer:
        out += (place[("sorcerer", 0)], place[("sorcerer", 1)], place[("sorcerer", 2)])[:logs + 1]
        out.append(_powers(state, seat, "sorcerer", text))
    if p.chief:
        out.append(place[("chief", 0)])
        if p.tablets >= CHIEF_POWER_COST:
            out.append(_powers(state, seat, "chief", text))
    if p.markers > 0 and state.tablets > 0:
        out.append(_TABLET_RUN if text else (_TABLET,))
    if state.players == 2 and p.markers > 0:
        if state.neutrals > 0:
            out.append(neutral_new)
        # Hexes with an unmarked neutral worker, in listing order: found among the
        # occupied hexes (not by a look at every land hex).
        index = _LAND_INDEX
        cells = [cell for cell, tokens in state.board.items() if "n" in tokens and cell in index]
        for cell in sorted(cells, key=index.__getitem__) if len(cells) > 1 else cells:
            out.append(neutral_move[cell])
    out.append(_PASS_RUN if text else (_PASS,))
    return tuple(out)


_TABLET_RUN, _PASS_RUN = ("tablet",), ("pass",)


def _take_figure(state: GameState, seat: int, figure: str) -> None:
    p = state.seats[seat]
    if figure == "worker":
        if p.workers < 1:
            raise IllegalActionError("no worker behind your screen")
        p.workers -= 1
    elif figure == "sorcerer":
        if not p.sorcerer:
            raise IllegalActionError("your sorcerer is not behind your screen")
        p.sorcerer = False
    elif figure == "chief":
        if not p.chief:
            raise IllegalActionError("your chief is not behind your screen")
        p.chief = False
    else:
        raise IllegalActionError(f"unknown figure {figure!r}")


def _land(cell: Hex) -> None:
    if cell not in ISLAND.land:
        raise IllegalActionError(f"{cell} is not a land hex")


def _apply_place(state: GameState, seat: int, a: Place, events: list[Event]) -> None:
    _land(a.hex)
    p = state.seats[seat]
    limit = 0 if a.figure == "chief" else 2
    if not 0 <= a.logs <= limit or a.logs > p.logs:
        raise IllegalActionError(f"a {a.figure} may take 0-{limit} logs from behind your screen")
    _take_figure(state, seat, a.figure)
    state.add_piece(a.hex, f"{a.figure[0]}{seat}")
    if a.logs:
        p.logs -= a.logs
        state.add_piece(a.hex, "l", a.logs)
    events.append({
        "type": "place", "seat": seat, "figure": a.figure, "hex": hex_key(a.hex), "logs": a.logs,
    })


def _apply_power(state: GameState, seat: int, a: Power, events: list[Event]) -> None:
    p = state.seats[seat]
    if a.figure not in ("sorcerer", "chief"):
        raise IllegalActionError("only the sorcerer or the chief use a power")
    if a.figure == "chief" and p.tablets < CHIEF_POWER_COST:
        raise IllegalActionError("the chief's power costs 2 half-tablets (GI-14)")
    event: Event = {"type": "power", "seat": seat, "figure": a.figure, "power": a.power,
                    "hex": hex_key(a.hex)}
    if a.power == "village":
        if a.hex != ISLAND.village or p.reserve_workers < 1:
            raise IllegalActionError("the village gives a worker only from your reserve")
        _take_figure(state, seat, a.figure)
        p.reserve_workers -= 1
        p.workers += 1
    elif a.power == "hut":
        if a.hex != ISLAND.hut or p.reserve_markers < 1:
            raise IllegalActionError("the hut gives a marker only from your reserve")
        _take_figure(state, seat, a.figure)
        p.reserve_markers -= 1
        p.markers += 1
    elif a.power == "forest":
        logs = state.forests.get(a.hex, 0)
        if logs < 1:
            raise IllegalActionError("that is not an unexhausted forest")
        _take_figure(state, seat, a.figure)
        state.forests[a.hex] = 0
        p.logs += logs
        event["logs"] = logs
    elif a.power == "reserve":
        ahu = ISLAND.ahu_by_id.get(a.ahu or "")
        if ahu is None or a.hex not in ahu.adjacent:
            raise IllegalActionError("reserve an Ahu from a land hex adjacent to it")
        st = state.ahu[ahu.id]
        if st.reserved is not None or st.size:
            raise IllegalActionError(f"{ahu.id} is not free")
        if p.bases < 1:
            raise IllegalActionError("no base behind your screen")
        _take_figure(state, seat, a.figure)
        p.bases -= 1
        state.own_ahu(ahu.id).reserved = seat
        event["ahu"] = ahu.id
    elif a.power == "clay":
        if a.hex != ISLAND.clay_pit or state.headdresses < 1:
            raise IllegalActionError("no headdress left at the clay pit")
        _take_figure(state, seat, a.figure)
        state.headdresses -= 1
        event["statue"] = state.new_statue("H", 1, ISLAND.clay_pit, seat)
    else:
        raise IllegalActionError(f"unknown power {a.power!r}")
    if a.figure == "chief":
        p.tablets -= CHIEF_POWER_COST
        state.tablets += CHIEF_POWER_COST
    state.add_piece(a.hex, f"{a.figure[0]}{seat}")
    events.append(event)


def _apply_neutral(state: GameState, seat: int, a: Neutral, events: list[Event]) -> None:
    p = state.seats[seat]
    if state.players != 2:
        raise IllegalActionError("neutral workers exist only with 2 players (GI-16)")
    if p.markers < 1:
        raise IllegalActionError("a neutral worker costs a marker from behind your screen")
    _land(a.target)
    if a.source is None:
        if state.neutrals < 1:
            raise IllegalActionError("no neutral worker left beside the board")
        state.neutrals -= 1
    else:
        if "n" not in state.board.get(a.source, {}):
            raise IllegalActionError("no unmarked neutral worker on that hex")
        state.remove_piece(a.source, "n")
    p.markers -= 1
    state.add_piece(a.target, f"n{seat}")
    events.append({
        "type": "neutral", "seat": seat, "target": hex_key(a.target),
        "source": None if a.source is None else hex_key(a.source),
    })


def apply(state: GameState, seat: int, action: object, events: list[Event]) -> None:
    """Apply one placement action of the current seat, then pass the turn on."""
    p = state.seats[seat]
    if isinstance(action, Place):
        _apply_place(state, seat, action, events)
    elif isinstance(action, Power):
        _apply_power(state, seat, action, events)
    elif isinstance(action, Tablet):
        if p.markers < 1 or state.tablets < 1:
            raise IllegalActionError("needs a marker behind your screen and a half-tablet in supply")
        p.markers -= 1
        p.front_markers += 1
        p.tablets += 1
        state.tablets -= 1
        events.append({"type": "tablet", "seat": seat})
    elif isinstance(action, Neutral):
        _apply_neutral(state, seat, action, events)
    elif isinstance(action, Pass):
        state.passed[seat] = True
        events.append({"type": "pass", "seat": seat, "phase": "place"})
    else:
        raise IllegalActionError("not a placement action")
    next_seat(state, seat, TRANSPORT)


def next_seat(state: GameState, seat: int, following: str) -> None:
    """The next seat clockwise that has not passed; else move on to `following`."""
    players, passed = state.players, state.passed
    i = 1
    while i <= players:  # (no range made: once a move)
        s = (seat + i) % players
        if not passed[s]:
            state.current = s
            return
        i += 1
    state.phase, state.current = following, PENDING
