"""What each seat sees (GI-28 … GI-30). The one view function feeds snapshots, patches
and bot observations, so hidden data left out here cannot leak anywhere.

Private to a seat (its `screen`): figures, markers, half-tablets, logs and bases behind
its screen, its sealed bid before the reveal, and the owners of bases it looked under.
Public: the board, the front of every screen, the offer, transport points, who has bid
(not what), who has passed. Hidden from everyone until the end: the dice seed (views
carry `seed_commitment`, see `engines.giants.dice`). After the end all is revealed.

Entries are keyed maps (hexes as "c,r", statues by id, Ahu by id, seats by "0".."4"),
so a typical action changes only a few entries of the diff. `ahu` lists only Ahu that
are reserved or hold a Moai; the fixed map data (values, neighbours) is `map.json`.
"""

from __future__ import annotations

from typing import Any

from engines.giants import dice
from engines.giants.board import ISLAND, hex_key
from engines.giants.state import AUCTION, OVER, GameState, Player

# Every fixed map key of a view (protocol 2's key table), those a move changes first:
# the same list for every seat and every game, so it tells no seat anything.
VIEW_KEYS: tuple[str, ...] = (
    "phase", "seats", "board", "bid_made", "passed", "statues", "ahu", "screen",
    "my_bid", "bid", "0", "1", "2", "3", "4", "points", "front_markers", "front_workers", "front_chief",
    "spent_workers", "spent_chief", "reserve_workers", "reserve_markers", "looked", "offer", "stock",
    "tablets", "headdresses", "neutrals", "order", "turn", "first", "dice",
    *(f"{f}{s}" for f in "cwsn" for s in range(5)), "n", "l",
    "kind", "size", "hex", "front", "marker", "reserved", "moai", "headdress", "owner",
    "workers", "chief", "sorcerer", "markers", "logs", "bases", "forests",
    *(hex_key(h) for h in ISLAND.land_order), *ISLAND.ahu_by_id,
    "game", "players", "you", "seed_commitment", "seed", "screens",
)


def _screen(p: Player) -> dict[str, Any]:
    return {
        "workers": p.workers, "chief": p.chief, "sorcerer": p.sorcerer, "markers": p.markers,
        "tablets": p.tablets, "logs": p.logs, "bases": p.bases,
    }


def _public_seat(state: GameState, seat: int) -> dict[str, Any]:
    p = state.seats[seat]
    data: dict[str, Any] = {
        "points": p.points,
        "front_markers": p.front_markers,
        "front_workers": p.front_workers,
        "front_chief": p.front_chief,
        "spent_workers": p.spent_workers,
        "spent_chief": p.spent_chief,
        "reserve_workers": p.reserve_workers,
        "reserve_markers": p.reserve_markers,
        "passed": state.passed[seat] if state.passed else False,
        "bid_made": p.bid is not None,
        "looked": list(p.looked),  # which Ahu they paid to look under (not what they saw)
    }
    if state.phase != AUCTION and p.bid is not None:
        data["bid"] = [p.bid.markers, p.bid.workers, p.bid.chief]  # revealed (GI-8)
    return data


# The public part of the last state's views: a change builds the views of every seat
# and of the spectators from one state, and rooms keep each member's last view, so the
# seats' views share these objects (built once, kept once) instead of equal copies.
# Only what every seat sees is in it. Identity is a safe key: a state never changes
# after `apply` returns it, and the cache holds it. Views are read, never changed.
_last_public: tuple[object, dict[str, Any]] = (None, {})


def _public(state: GameState) -> dict[str, Any]:
    global _last_public
    cached, public = _last_public
    if cached is not state:
        public = {
            "seed_commitment": dice.commitment(state.seed),
            "offer": {"1": state.offer[0], "2": state.offer[1], "3": state.offer[2]},
            "stock": {"1": state.stock[0], "2": state.stock[1], "3": state.stock[2]},
            "forests": {hex_key(h): n for h, n in state.forests.items()},
            "board": {
                hex_key(h): {t: list(v) for t, v in tokens.items()} for h, tokens in state.board.items()
            },
            "statues": {
                sid: {"kind": st.kind, "size": st.size, "hex": hex_key(st.hex), "front": st.front,
                      "marker": st.marker}
                for sid, st in state.statues.items()
            },
            "seats": {str(s): _public_seat(state, s) for s in range(state.players)},
        }
        _last_public = (state, public)
    return public


def view(state: GameState, seat: int | None) -> dict[str, Any]:
    """The view of `seat` (None = spectator) as msgpack-able data with string keys.

    Who acts now is not in it: the room's `to_act` says so, and every move's patch
    would otherwise carry it twice (docs/performance.md, "Patch frames").
    """
    over = state.phase == OVER
    ahu: dict[str, Any] = {}
    for aid, st in state.ahu.items():
        if st.reserved is None and not st.size:
            continue  # an empty Ahu: its values and neighbours are in the map data
        entry: dict[str, Any] = {"reserved": st.reserved, "moai": st.size,
                                 "headdress": st.headdress}
        if st.size and (
            over or (seat is not None and (st.owner == seat or aid in state.seats[seat].looked))
        ):
            entry["owner"] = st.owner
        ahu[aid] = entry
    public = _public(state)
    data: dict[str, Any] = {
        "game": "giants",
        "players": state.players,
        "you": seat,
        "turn": state.turn,
        "phase": state.phase,
        "first": state.first,
        "seed_commitment": public["seed_commitment"],
        "dice": list(state.faces),
        "offer": public["offer"],
        "stock": public["stock"],
        "tablets": state.tablets,
        "headdresses": state.headdresses,
        "neutrals": state.neutrals,
        "order": list(state.order),
        "forests": public["forests"],
        "board": public["board"],
        "statues": public["statues"],
        "ahu": ahu,
        "seats": public["seats"],
    }
    if seat is not None and not over:
        p = state.seats[seat]
        data["screen"] = _screen(p)
        data["my_bid"] = None if p.bid is None else [p.bid.markers, p.bid.workers, p.bid.chief]
    if over:
        data["seed"] = state.seed
        data["screens"] = {str(s): _screen(p) for s, p in enumerate(state.seats)}
    return data
