"""The GIANTS game state (hidden parts included) and its snapshot form.

`GameState` is mutable inside this package only: `apply` copies the caller's state
first (`successor`) and changes the copy, so callers may treat every state as immutable.
The copy shares the hexes' token maps, the statues and the Ahu with its original (most
of them do not change in a move, and the views and their diff then pass them by
identity); `apply` changes one only through `own_hex`, `own_statue`, `own_ahu`,
`add_piece` and `remove_piece`, which put a private copy in its place first. New games
share their empty Ahu and forests (read only, `new_state`). `clone` copies everything:
a clone may be changed in place anywhere (tests build situations that way).

Board pieces are counted per hex and per token, because figures of one kind and one
owner are interchangeable: `w<seat>` worker, `s<seat>` sorcerer, `c<seat>` chief,
`n` unmarked neutral worker, `n<seat>` neutral worker carrying that seat's marker,
`l` log. `board[hex][token] = [count, used]` where `used` counts the pieces that
already carried a statue this turn (GI-18).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engines.base import BadSnapshotError
from engines.giants.board import ISLAND, Hex, hex_key, key_hex

STOCK = (17, 12, 6)  # GI-4: Moai of size 1, 2, 3
TABLETS = 30
HEADDRESSES = 14
NEUTRALS = 6
MAX_TURNS = 20  # GI-26 guard
SNAPSHOT_VERSION = 1

# Phases / steps, in turn order.
AUCTION = "auction"  # GI-8 simultaneous sealed bids
CLAIM = "claim"  # GI-10 claim rounds
PLACE = "place"  # GI-12..17
TRANSPORT = "transport"  # GI-18..24
RETURNS = "returns"  # GI-24 end of phase 4: mark returned statues
CLEANUP = "cleanup"  # GI-25 take markers back from statues
OVER = "over"
PHASES = (AUCTION, CLAIM, PLACE, TRANSPORT, RETURNS, CLEANUP, OVER)


def bases_for(players: int) -> int:
    """GI-3."""
    return {2: 7, 3: 6}.get(players, 5)


@dataclass(frozen=True, slots=True)
class Bid:
    """A sealed bid (GI-8): markers for choice order, sculptors (workers, chief)."""

    markers: int
    workers: int
    chief: bool


_new_player = object.__new__


@dataclass(slots=True)
class Player:
    """One seat. Fields up to `bases` are behind the screen (private, GI-28)."""

    workers: int
    chief: bool
    sorcerer: bool
    markers: int
    tablets: int
    logs: int
    bases: int
    reserve_workers: int  # not yet gained (village power)
    reserve_markers: int  # not yet gained (hut power)
    bid: Bid | None = None  # sealed until the reveal, then public until cleanup
    front_markers: int = 0  # in front of the screen (bid markers, GI-15 markers)
    front_workers: int = 0  # bid sculptors in front of the screen
    front_chief: bool = False
    spent_workers: int = 0  # bid workers already used to sculpt
    spent_chief: bool = False
    points: int = 0  # transport points (GI-19), public
    looked: list[str] = field(default_factory=list)  # Ahu ids looked under (GI-23)

    def clone(self) -> Player:
        """A copy sharing `looked` (never changed in place: `apply_look` replaces it),
        for `successor`; `GameState.clone` copies that list too."""
        # Slot by slot, without the dataclass's __init__ call (two a move, `successor`)
        new = _new_player(Player)
        new.workers = self.workers
        new.chief = self.chief
        new.sorcerer = self.sorcerer
        new.markers = self.markers
        new.tablets = self.tablets
        new.logs = self.logs
        new.bases = self.bases
        new.reserve_workers = self.reserve_workers
        new.reserve_markers = self.reserve_markers
        new.bid = self.bid
        new.front_markers = self.front_markers
        new.front_workers = self.front_workers
        new.front_chief = self.front_chief
        new.spent_workers = self.spent_workers
        new.spent_chief = self.spent_chief
        new.points = self.points
        new.looked = self.looked
        return new


@dataclass(slots=True)
class Statue:
    """A Moai ('M', size 1-3) or headdress ('H', size 1) not yet on an Ahu.

    `front` is the seat whose screen it stands in front of (it then sits at Q or C);
    `marker` is the seat whose tribe marker is on it (GI-22).
    """

    kind: str
    size: int
    hex: Hex
    front: int | None = None
    marker: int | None = None

    def clone(self) -> Statue:
        return Statue(self.kind, self.size, self.hex, self.front, self.marker)


@dataclass(slots=True, eq=False)
class AhuState:
    """An Ahu: reserved base (public), erected Moai (size, hidden owner), headdress."""

    reserved: int | None = None
    owner: int | None = None  # base owner under an erected Moai (hidden, GI-28)
    size: int = 0  # 0 = no Moai erected
    headdress: bool = False

    def clone(self) -> AhuState:
        return AhuState(self.reserved, self.owner, self.size, self.headdress)

    def __eq__(self, other: object) -> bool:  # equal by value, shared (read-only) or not
        if not isinstance(other, AhuState):
            return NotImplemented
        return (self.reserved, self.owner, self.size, self.headdress) == (
            other.reserved, other.owner, other.size, other.headdress)


class _SharedAhu(AhuState):
    """The empty Ahu every new game's state holds (`new_state`): read only."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise TypeError("a new game's Ahu is shared between states: clone the state first")

    def __reduce__(self) -> tuple[Any, ...]:  # copies and pickles are ordinary Ahu
        return AhuState, (self.reserved, self.owner, self.size, self.headdress)


class _SharedMap(dict):
    """A map every new game's state holds (`new_state`): read only. `clone` copies it
    into a plain dict, and `apply` changes only a clone, so no state ever needs to
    change it; a bug that tried would fail here instead of changing every game."""

    __slots__ = ()

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise TypeError("a new game's map is shared between states: clone the state first")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:  # copies and pickles are plain dicts
        return dict, (dict(self),)


def _shared_ahu() -> AhuState:
    ahu = object.__new__(_SharedAhu)
    empty = AhuState()
    for name in ("reserved", "owner", "size", "headdress"):
        object.__setattr__(ahu, name, getattr(empty, name))
    return ahu


_new_state = object.__new__


@dataclass(slots=True)
class GameState:
    players: int
    seed: int
    first: int  # seat holding the first-player pawn this turn
    turn: int = 1
    phase: str = AUCTION
    seats: list[Player] = field(default_factory=list)
    stock: list[int] = field(default_factory=lambda: list(STOCK))
    offer: list[int] = field(default_factory=lambda: [0, 0, 0])  # count per size 1..3
    faces: list[int] = field(default_factory=list)  # this turn's dice
    tablets: int = TABLETS  # half-tablets in the supply
    headdresses: int = HEADDRESSES  # at the clay pit supply
    neutrals: int = 0  # neutral workers beside the board (2 players)
    forests: dict[Hex, int] = field(default_factory=dict)  # logs left (0 = exhausted)
    board: dict[Hex, dict[str, list[int]]] = field(default_factory=dict)
    statues: dict[str, Statue] = field(default_factory=dict)
    next_statue: int = 1
    ahu: dict[str, AhuState] = field(default_factory=dict)
    current: int | None = None  # the seat to act in a sequential step
    passed: list[bool] = field(default_factory=list)
    order: list[int] = field(default_factory=list)  # claim order / returns / cleanup queue
    claimed_in_round: bool = False
    reason: str = ""  # why the game ended
    # Its views' parts (`views`): a cache, not part of the state's value or snapshot;
    # a clone starts with its original's, to reuse the parts that did not change. So a
    # state is not changed once viewed (`apply` changes a `successor`): change a clone.
    view_memo: object = field(default=None, compare=False, repr=False)

    def clone(self) -> GameState:
        seats = [p.clone() for p in self.seats]
        for p in seats:
            p.looked = list(p.looked)  # (a clone may be changed in place anywhere)
        return GameState(
            self.players, self.seed, self.first, self.turn, self.phase,
            seats, list(self.stock), list(self.offer),
            list(self.faces), self.tablets, self.headdresses, self.neutrals,
            dict(self.forests),
            {h: {t: list(v) for t, v in tokens.items()} for h, tokens in self.board.items()},
            {k: s.clone() for k, s in self.statues.items()}, self.next_statue,
            {k: a.clone() for k, a in self.ahu.items()}, self.current, list(self.passed),
            list(self.order), self.claimed_in_round, self.reason, self.view_memo,
        )

    def successor(self) -> GameState:
        """The copy `apply` changes: hexes, statues and Ahu shared with this state, so
        change them only through the `own_*`/`*_piece` methods below; each player is
        its own copy, sharing only its `looked` list (a look replaces it: `apply_look`)."""
        # Slot by slot, without the dataclass's __init__ call (once a move)
        new = _new_state(GameState)
        new.players = self.players
        new.seed = self.seed
        new.first = self.first
        new.turn = self.turn
        new.phase = self.phase
        new.seats = seats = []  # (a loop: no comprehension's function made and called)
        for p in self.seats:
            seats.append(p.clone())
        new.stock = list(self.stock)
        new.offer = list(self.offer)
        new.faces = list(self.faces)
        new.tablets = self.tablets
        new.headdresses = self.headdresses
        new.neutrals = self.neutrals
        new.forests = dict(self.forests)
        new.board = dict(self.board)
        new.statues = dict(self.statues)
        new.next_statue = self.next_statue
        new.ahu = dict(self.ahu)
        new.current = self.current
        new.passed = list(self.passed)
        new.order = list(self.order)
        new.claimed_in_round = self.claimed_in_round
        new.reason = self.reason
        new.view_memo = self.view_memo
        return new

    def own_hex(self, cell: Hex) -> dict[str, list[int]]:
        """The tokens of `cell` as this state's own map, to change (created empty)."""
        tokens = self.board.get(cell)
        mine = {t: list(v) for t, v in tokens.items()} if tokens else {}
        self.board[cell] = mine
        return mine

    def own_statue(self, sid: str) -> Statue:
        """Statue `sid` as this state's own object, to change."""
        mine = self.statues[sid] = self.statues[sid].clone()
        return mine

    def own_ahu(self, aid: str) -> AhuState:
        """Ahu `aid` as this state's own object, to change."""
        mine = self.ahu[aid] = self.ahu[aid].clone()
        return mine

    # -- small helpers used by every phase ------------------------------------------

    def seat_order(self, start: int | None = None) -> list[int]:
        """Seats in turn order from `start` (default: the first player)."""
        s = self.first if start is None else start
        return [(s + i) % self.players for i in range(self.players)]

    def add_piece(self, cell: Hex, token: str, count: int = 1) -> None:
        entry = self.own_hex(cell).setdefault(token, [0, 0])
        entry[0] += count

    def remove_piece(self, cell: Hex, token: str) -> None:
        tokens = self.own_hex(cell)
        entry = tokens[token]
        entry[0] -= 1
        entry[1] = min(entry[1], entry[0])
        if entry[0] == 0:
            del tokens[token]
            if not tokens:
                del self.board[cell]

    def new_statue(self, kind: str, size: int, cell: Hex, front: int | None) -> str:
        sid = f"{kind}{self.next_statue}"
        self.next_statue += 1
        self.statues[sid] = Statue(kind, size, cell, front)
        return sid


# The parts of a new game's state that are the same in every game and that turn-1 setup
# leaves alone: every new state holds these objects, read only, instead of its own
# copies (~2 KiB a new room: memory per room, docs/performance.md).
_EMPTY_AHU = _shared_ahu()
_NEW_AHU: dict[str, AhuState] = _SharedMap((a.id, _EMPTY_AHU) for a in ISLAND.ahu)
_NEW_FORESTS: dict[Hex, int] = _SharedMap(ISLAND.forests)


def new_state(players: int, seed: int, first: int) -> GameState:
    """GI-2..4 setup; the caller then rolls the turn-1 dice. The Ahu and forests are
    shared, read-only objects (`apply` changes only a clone)."""
    two = players == 2
    start_workers, start_markers = (2, 3) if two else (1, 2)
    seats = [
        Player(
            workers=start_workers, chief=True, sorcerer=True, markers=start_markers,
            tablets=0, logs=0, bases=bases_for(players),
            reserve_workers=6 - start_workers, reserve_markers=6 - start_markers,
        )
        for _ in range(players)
    ]
    return GameState(
        players=players, seed=seed, first=first, seats=seats,
        neutrals=NEUTRALS if two else 0, forests=_NEW_FORESTS, ahu=_NEW_AHU, passed=[False] * players,
    )


# ----------------------------------------------------------------------------- snapshot


def _player_data(p: Player) -> dict[str, Any]:
    return {
        "workers": p.workers, "chief": p.chief, "sorcerer": p.sorcerer, "markers": p.markers,
        "tablets": p.tablets, "logs": p.logs, "bases": p.bases,
        "reserve_workers": p.reserve_workers, "reserve_markers": p.reserve_markers,
        "bid": None if p.bid is None else [p.bid.markers, p.bid.workers, p.bid.chief],
        "front_markers": p.front_markers, "front_workers": p.front_workers,
        "front_chief": p.front_chief, "spent_workers": p.spent_workers,
        "spent_chief": p.spent_chief, "points": p.points, "looked": list(p.looked),
    }


def to_data(s: GameState) -> dict[str, Any]:
    """The full state as msgpack-able data with string keys."""
    return {
        "version": SNAPSHOT_VERSION,
        "players": s.players, "seed": s.seed, "first": s.first, "turn": s.turn,
        "phase": s.phase, "seats": [_player_data(p) for p in s.seats],
        "stock": list(s.stock), "offer": list(s.offer), "faces": list(s.faces),
        "tablets": s.tablets, "headdresses": s.headdresses, "neutrals": s.neutrals,
        "forests": {hex_key(h): n for h, n in s.forests.items()},
        "board": {
            hex_key(h): {t: list(v) for t, v in tokens.items()} for h, tokens in s.board.items()
        },
        "statues": {
            k: [st.kind, st.size, hex_key(st.hex), st.front, st.marker]
            for k, st in s.statues.items()
        },
        "next_statue": s.next_statue,
        "ahu": {k: [a.reserved, a.owner, a.size, a.headdress] for k, a in s.ahu.items()},
        "current": s.current, "passed": list(s.passed), "order": list(s.order),
        "claimed_in_round": s.claimed_in_round, "reason": s.reason,
    }


def from_data(d: Any) -> GameState:
    """Rebuild a state from `to_data` output; BadSnapshotError if it is not one."""
    try:
        if d["version"] != SNAPSHOT_VERSION:
            raise BadSnapshotError(f"giants snapshot version {d['version']} is not supported")
        seats = []
        for p in d["seats"]:
            bid = p["bid"]
            seats.append(Player(
                p["workers"], p["chief"], p["sorcerer"], p["markers"], p["tablets"], p["logs"],
                p["bases"], p["reserve_workers"], p["reserve_markers"],
                None if bid is None else Bid(bid[0], bid[1], bid[2]),
                p["front_markers"], p["front_workers"], p["front_chief"], p["spent_workers"],
                p["spent_chief"], p["points"], list(p["looked"]),
            ))
        state = GameState(
            players=d["players"], seed=d["seed"], first=d["first"], turn=d["turn"],
            phase=d["phase"], seats=seats, stock=list(d["stock"]), offer=list(d["offer"]),
            faces=list(d["faces"]), tablets=d["tablets"], headdresses=d["headdresses"],
            neutrals=d["neutrals"],
            forests={key_hex(k): n for k, n in d["forests"].items()},
            board={
                key_hex(k): {t: list(v) for t, v in tokens.items()}
                for k, tokens in d["board"].items()
            },
            statues={
                k: Statue(v[0], v[1], key_hex(v[2]), v[3], v[4]) for k, v in d["statues"].items()
            },
            next_statue=d["next_statue"],
            ahu={k: AhuState(v[0], v[1], v[2], v[3]) for k, v in d["ahu"].items()},
            current=d["current"], passed=list(d["passed"]), order=list(d["order"]),
            claimed_in_round=d["claimed_in_round"], reason=d["reason"],
        )
    except BadSnapshotError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise BadSnapshotError(f"not a giants snapshot: {exc!r}") from exc
    if state.phase not in PHASES or len(state.seats) != state.players:
        raise BadSnapshotError("giants snapshot has an unknown phase or wrong seat count")
    return state
