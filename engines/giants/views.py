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
from engines.giants.state import AUCTION, OVER, GameState, Player, Statue

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


# How many leading entries every view of one state shares, the very objects (all but the
# viewer's own: `you`, `ahu`, then `screen` and `my_bid` or, once over, `seed` and
# `screens`): the room diffs them once for all its members (server.split_diffs, `SplitDiffs`).
SHARED_START = 17


def _screen(p: Player) -> dict[str, Any]:
    return {
        "workers": p.workers, "chief": p.chief, "sorcerer": p.sorcerer, "markers": p.markers,
        "tablets": p.tablets, "logs": p.logs, "bases": p.bases,
    }


def _public_seat(state: GameState, seat: int, was: dict[str, Any] | None = None) -> dict[str, Any]:
    """The seat's public part; its lists are `was`'s (the part it replaces) when equal,
    so the diff passes them by identity."""
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
        # which Ahu they paid to look under (not what they saw)
        "looked": was["looked"] if was is not None and was["looked"] == p.looked else list(p.looked),
    }
    if state.phase != AUCTION and p.bid is not None:
        bid = [p.bid.markers, p.bid.workers, p.bid.chief]  # revealed (GI-8)
        data["bid"] = was["bid"] if was is not None and was.get("bid") == bid else bid
    return data


# A state's view parts, kept with the state (`GameState.view_memo`, not part of its
# value or snapshot) and passed on to its clones: a change builds the views of every
# seat and of the spectators from one state, so they share its public parts (built
# once), and the next state's parts whose sources equal (by value) its ancestor's are
# the very objects the ancestor's views had, so the room's diff passes them by identity
# (`protocol.patch`): a move rebuilds and diffs only the hexes, statues and seats it
# changed. Only what every seat sees is in `public`; a seat's own parts (the Ahu owners
# it may see, its screen and bid) are in `own` under its seat, so no seat is handed
# another's. The memo holds the state's parts (not the state: no cycle), which never
# change after `apply` returns it; it lives and dies with the state and its clones,
# so a room that packs its state frees it too. Views are read, never changed.
class _Memo:
    __slots__ = ("ahu", "board", "faces", "forests", "offer", "order", "own", "passed", "phase", "public",
                 "seats", "sources", "statues", "stock", "template")

    def __init__(self, state: GameState) -> None:
        self.phase, self.board, self.statues, self.seats = state.phase, state.board, state.statues, state.seats
        self.passed, self.ahu, self.offer, self.stock = state.passed, state.ahu, state.offer, state.stock
        self.forests, self.faces, self.order = state.forests, state.faces, state.order
        self.public: dict[str, Any] = {}
        self.own: dict[int | None, tuple[dict[str, Any], dict[str, Any] | None, list[Any] | None]] = {}
        self.template: dict[str, Any] | None = None  # `view`'s, built by the first view of the state
        # Per seat: what its public part and its screen are made of (`_sources`), to
        # tell the next state's seats that changed by one comparison each.
        self.sources: list[tuple[tuple[Any, ...], tuple[Any, ...]]] = []


# The view key of every land hex (where pieces stand), written once: a board change
# looked up every occupied hex's key anew, twice.
_HEX_KEYS = {h: hex_key(h) for h in ISLAND.land_order}


def _board(state: GameState, last: _Memo | None, was: dict[str, Any]) -> dict[str, Any]:
    board, keys = state.board, _HEX_KEYS
    if last is None:
        return {keys.get(h) or hex_key(h): {t: list(v) for t, v in tokens.items()} for h, tokens in board.items()}
    before = last.board
    if board == before:
        return was
    get = before.get
    out: dict[str, Any] = {}
    for h, tokens in board.items():
        key = keys.get(h) or hex_key(h)
        old = get(h)  # the hexes a move left alone are the very maps (`successor`)
        out[key] = was[key] if old is tokens or old == tokens else {t: list(v) for t, v in tokens.items()}
    return out


def _statue(st: Statue) -> dict[str, Any]:
    return {"kind": st.kind, "size": st.size, "hex": hex_key(st.hex), "front": st.front, "marker": st.marker}


def _statues(state: GameState, last: _Memo | None, was: dict[str, Any]) -> dict[str, Any]:
    statues = state.statues
    if last is None:
        return {sid: _statue(st) for sid, st in statues.items()}
    before = last.statues
    if statues == before:
        return was
    get = before.get
    # A statue a move left alone is the very object (`successor`): no field comparison
    return {sid: was[sid] if (old := get(sid)) is st or old == st else _statue(st) for sid, st in statues.items()}


def _sources(state: GameState) -> list[tuple[tuple[Any, ...], tuple[Any, ...]]]:
    """Per seat: all that `_public_seat` reads (the Ahu it looked under among it; not
    what is behind the screen) and what only it sees (`_screen`, its bid): the
    ancestor's equal, the seat's parts are the ancestor's. (A loop of its own, with no
    comprehension, `enumerate` or call a seat: it runs on every move.)"""
    passed, auction = state.passed, state.phase == AUCTION
    out = []
    seat = 0
    for p in state.seats:
        bid = p.bid
        out.append(((p.points, p.front_markers, p.front_workers, p.front_chief, p.spent_workers, p.spent_chief,
                     p.reserve_workers, p.reserve_markers, passed[seat] if passed else False,
                     bid is not None, p.looked, None if auction else bid),
                    (p.workers, p.chief, p.sorcerer, p.markers, p.tablets, p.logs, p.bases, bid)))
        seat += 1  # noqa: SIM113 (no enumerate: see above)
    return out


def _seats(state: GameState, last: _Memo | None, was: dict[str, Any], sources: list[Any]) -> dict[str, Any]:
    if last is None:
        return {str(s): _public_seat(state, s) for s in range(state.players)}
    before = last.sources
    out = was
    s = 0
    for source in sources:
        if source[0] != before[s][0]:
            if out is was:  # the ancestor's part (its seats' keys in seat order), the changed seats replaced
                out = was.copy()
            key = str(s)
            out[key] = _public_seat(state, s, was[key])
        s += 1  # noqa: SIM113 (no enumerate: see _sources)
    return out


def _memo(state: GameState) -> _Memo:
    """The state's memo, made from its ancestor's (passed on by `clone`) on first use."""
    memo = state.view_memo
    last = memo if type(memo) is _Memo else None
    if last is not None and last.board is state.board:
        return last  # its own
    new = _Memo(state)
    was = last.public if last is not None else {}
    sources = new.sources = _sources(state)
    new.public = {
        "seed_commitment": was["seed_commitment"] if last is not None else dice.commitment(state.seed),
        "offer": was["offer"] if last is not None and last.offer == state.offer
        else {"1": state.offer[0], "2": state.offer[1], "3": state.offer[2]},
        "stock": was["stock"] if last is not None and last.stock == state.stock
        else {"1": state.stock[0], "2": state.stock[1], "3": state.stock[2]},
        "forests": was["forests"] if last is not None and last.forests == state.forests
        else {hex_key(h): n for h, n in state.forests.items()},
        "dice": was["dice"] if last is not None and last.faces == state.faces else list(state.faces),
        "order": was["order"] if last is not None and last.order == state.order else list(state.order),
        "board": _board(state, last, was.get("board", {})),
        "statues": _statues(state, last, was.get("statues", {})),
        "seats": _seats(state, last, was.get("seats", {}), sources),
    }
    if last is not None and state.phase != OVER:  # the seats the ancestor was viewed by, now
        same_ahu = last.ahu == state.ahu
        before = last.sources
        for seat, kept in list(last.own.items()):
            if same_ahu and (seat is None or sources[seat] == before[seat]):
                new.own[seat] = kept  # nothing it sees of its own changed
            else:
                new.own[seat] = _own(state, seat, last, kept, same_ahu)
    state.view_memo = new  # one store: a view in another thread sees the old memo or this
    return new


def viewed(state: GameState) -> GameState:
    """`state` once viewed by every seat and a spectator: its memo then holds every
    part a view of it has (a template for `share_parts`). Returns `state`."""
    for seat in (None, *range(state.players)):
        view(state, seat)
    return state


def share_parts(state: GameState, template: GameState) -> None:
    """Give `state` (a new or restored state, not viewed yet) its view parts now, as if
    it followed `template` (a `viewed` state of as many seats): every part equal to
    the template's (by the same comparisons a move's successor is viewed with) is the
    template's own object, and every seat's own parts are built from the template's
    equal ones. New rooms of a game start alike, so they then hold one copy of what
    their views have alike (memory per room, docs/performance.md); the caller views
    `state` as usual afterwards. Views are read, never changed, so sharing them
    across states is as safe as sharing them with a successor."""
    memo = template.view_memo
    if type(memo) is not _Memo or state.view_memo is not None or state.board is memo.board:
        return
    state.view_memo = memo
    own = _memo(state)
    if state.seed != template.seed:  # the one part not made from what `_memo` compares
        own.public["seed_commitment"] = dice.commitment(state.seed)
    if own.sources == memo.sources:
        own.sources = memo.sources
    if state.turn == 1:
        public = own.public
        for key in _COUNTED:
            public[key] = _common(public[key])


# Parts `share_parts` gives every turn-1 state that has them equal, one object each (kept
# here): a new game's offer and stock follow from its turn-1 dice and take few values
# (19 offers and 19 stocks in 3,000 new games of each seat count, 2-5; its dice many
# more). Bounded all the same.
_COUNTED = ("offer", "stock")
_COMMON: dict[tuple[Any, ...], Any] = {}
_COMMON_MAX = 256


def _common(part: Any) -> Any:
    """`part` (a list or a str-keyed dict of ints), or the kept object equal to it (its
    entries' types too: 1 is not True)."""
    items = part.items() if type(part) is dict else enumerate(part)
    key = (type(part), *((k, type(v), v) for k, v in items))
    found = _COMMON.get(key)
    if found is None:
        if len(_COMMON) >= _COMMON_MAX:
            return part
        found = _COMMON[key] = part
    return found


def _ahu(state: GameState, seat: int | None, over: bool,
         last: _Memo | None = None, was: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Ahu as `seat` sees them; entries whose Ahu equal `last`'s are `was`'s (the
    caller passes them only when what this seat knew of them, `looked`, is the same)."""
    before = last.ahu if last is not None and was is not None else {}
    ahu: dict[str, Any] = {}
    for aid, st in state.ahu.items():
        if st.reserved is None and not st.size:
            continue  # an empty Ahu: its values and neighbours are in the map data
        if was is not None and aid in was and before.get(aid) == st:
            ahu[aid] = was[aid]
            continue
        entry: dict[str, Any] = {"reserved": st.reserved, "moai": st.size,
                                 "headdress": st.headdress}
        if st.size and (
            over or (seat is not None and (st.owner == seat or aid in state.seats[seat].looked))
        ):
            entry["owner"] = st.owner
        ahu[aid] = entry
    return ahu


def _bid(p: Player) -> list[Any] | None:
    return None if p.bid is None else [p.bid.markers, p.bid.workers, p.bid.chief]


def _own(state: GameState, seat: int | None, last: _Memo | None,
         kept: tuple[dict[str, Any], dict[str, Any] | None, list[Any] | None] | None,
         same_ahu: bool = False) -> tuple[dict[str, Any], dict[str, Any] | None, list[Any] | None]:
    """The parts only `seat` sees (the Ahu with the owners it may see, and a seat's
    screen and bid; None for a spectator), from `seat`'s own parts of `last` only."""
    p = state.seats[seat] if seat is not None else None
    if last is None or kept is None:
        return _ahu(state, seat, False), None if p is None else _screen(p), None if p is None else _bid(p)
    ahu, screen, bid = kept
    lp = last.seats[seat] if seat is not None else None
    if p is not None and lp is not None and lp.looked != p.looked:
        ahu = _ahu(state, seat, False)
    elif not same_ahu:
        ahu = _ahu(state, seat, False, last, ahu)
    if p is None or lp is None:
        return ahu, None, None
    if screen is None or (lp.workers, lp.chief, lp.sorcerer, lp.markers, lp.tablets, lp.logs, lp.bases) != (
            p.workers, p.chief, p.sorcerer, p.markers, p.tablets, p.logs, p.bases):
        screen = _screen(p)
    if bid is None or lp.bid != p.bid:
        bid = _bid(p)
    return ahu, screen, bid


def view(state: GameState, seat: int | None) -> dict[str, Any]:
    """The view of `seat` (None = spectator) as msgpack-able data with string keys.

    Who acts now is not in it: the room's `to_act` says so, and every move's patch
    would otherwise carry it twice (docs/performance.md, "Patch frames").
    """
    over = state.phase == OVER
    if over:  # all revealed: a last view, not kept
        ahu = _ahu(state, seat, True)
        screen, bid = None, None
    memo = state.view_memo
    if type(memo) is not _Memo or memo.board is not state.board:  # `_memo`'s own test, without its call
        memo = _memo(state)
    public = memo.public
    if not over:
        own = memo.own.get(seat)
        if own is None:
            own = memo.own[seat] = _own(state, seat, None, None)
        ahu, screen, bid = own
    template = memo.template
    if template is None:  # what every seat sees of this state, in the view's key order
        template = memo.template = {
            "game": "giants",
            "players": state.players,
            "turn": state.turn,
            "phase": state.phase,
            "first": state.first,
            "seed_commitment": public["seed_commitment"],
            "dice": public["dice"],
            "offer": public["offer"],
            "stock": public["stock"],
            "tablets": state.tablets,
            "headdresses": state.headdresses,
            "neutrals": state.neutrals,
            "order": public["order"],
            "forests": public["forests"],
            "board": public["board"],
            "statues": public["statues"],
            "seats": public["seats"],
            # The viewer's own entries come last (`you`, `ahu`, then `screen` and
            # `my_bid`): every view of a state starts with the same entries, the very
            # objects, so the room diffs that shared start once for all its members
            # (server.split_diffs, `SplitDiffs`) and only the rest member by member.
            "you": None,  # the viewer's, below
            "ahu": None,  # the viewer's, below
        }
    data = template.copy()  # the same keys in the same order: the diff passes it by identity
    data["you"] = seat
    data["ahu"] = ahu
    if seat is not None and not over:
        data["screen"] = screen
        data["my_bid"] = bid
    if over:
        data["seed"] = state.seed
        data["screens"] = {str(s): _screen(p) for s, p in enumerate(state.seats)}
    return data
