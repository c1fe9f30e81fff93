"""What an idle room keeps packed: its members' last views, their protocol-3 legal
bases, and its engine state (memory per room, docs/performance.md).

Everything is msgpack (or text), deflated against a preset dictionary: a constant of
the game and player count, built once per process from a game nobody plays (the
engine's new game with seed 0, its spectator's view and, with hidden information, its
first seat's, its first legal lists). Rooms of a
game start alike and keep most of their structure (keys, boards, supplies), so a
packed initial state or view is a few dozen bytes instead of hundreds. A dictionary is
built from constants only, never from a room's data, so it can hold nothing of any
seat; each packed object is still one member's (or the room's own) and unpacks to
exactly what was packed.

Callers pack only rooms idle across a sweep (`Room.compact`), and unpack on the next
access (the `Room.state` property for the state, `RoomViews.expand_views` for the rest).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

from engines.base import Engine
from server.store_base import pack, unpack

# A 4 KiB window: a dictionary and a packed GIANTS state together exceed 1 KiB (a
# 5-seat GIANTS view dictionary is 2.6 KB, its views 1.2 KB), and matches beyond the
# window are lost. The compressor's state is then ~18 KiB (16 KiB
# window + 2 KiB hash tables at memLevel 2), made and freed per call; zlib.compress's
# defaults take ~256 KiB, which glibc serves from the heap and the process keeps.
# Negative: raw deflate, without zlib's header, dictionary id and checksum (10 bytes
# of every packed object; the bytes never leave the process that packed them).
WBITS = -12
LEVEL = 1


class PackedState(bytes):
    """A room's engine state while packed (`pack_state`): bytes of its own type, so
    `Room.state` tells it from any engine's state with one type test."""

    __slots__ = ()


# What `share_initial` compares a part with: the template's own object, its msgpack
# form, and the same for its entries if it is a dict (to `TEMPLATE_DEPTH` levels).
Part = tuple[Any, bytes, "dict[str, Part] | None"]
TEMPLATE_DEPTH = 3


@dataclass(frozen=True, slots=True)
class Dictionaries:
    """Preset deflate dictionaries of one game and player count (constants), and the
    parts of the same new game's spectator view (`share_initial`)."""

    state: bytes
    view: bytes
    legal: bytes
    # The template parts per seat (None: a spectator's; every seat's, without hidden
    # information): see `share_initial`.
    games: dict[int | None, Part] | None = None

    def game(self, seat: int | None) -> Part | None:
        """The template parts for `seat`'s game view (`share_initial`), if any."""
        return None if self.games is None else self.games.get(seat)


_DICTS: dict[tuple[type, int], Dictionaries] = {}


def deflate(data: bytes, zdict: bytes = b"") -> bytes:
    """Raw deflate at zlib's level 1, a 4 KiB window, small hash tables, and `zdict` as
    the preset."""
    packer = zlib.compressobj(LEVEL, zlib.DEFLATED, WBITS, 2, zdict=zdict) if zdict else zlib.compressobj(
        LEVEL, zlib.DEFLATED, WBITS, 2)
    return packer.compress(data) + packer.flush()


def inflate(data: bytes, zdict: bytes = b"") -> bytes:
    """The bytes `deflate(data, zdict)` was given (the same `zdict`)."""
    unpacker = zlib.decompressobj(WBITS, zdict=zdict) if zdict else zlib.decompressobj(WBITS)
    return unpacker.decompress(data) + unpacker.flush()


def dictionaries(engine: Engine, players: int) -> Dictionaries:
    """The preset dictionaries for rooms of `engine` with `players` seats (cached).

    Built from the engine's own new game with seed 0 and default options: its snapshot,
    its spectator view inside a RoomView's shape (`template_room`; with hidden
    information, its first seat's view after it), and the legal lists of its first
    seats to act. A game that cannot be made so gets empty dictionaries (packing still
    works, only larger)."""
    key = (type(engine), players)
    found = _DICTS.get(key)
    if found is not None:
        return found
    try:
        state = engine.new_game(players, engine.validate_options(players, {}), 0)
        room = template_room(engine, players, state)
        view = {"room": room, "game": engine.view(state, None), "outcome": None}
        legal = "\n".join(a for seat in sorted(engine.to_act(state)) for a in engine.legal_notation(state, seat))
        games: dict[int | None, Part] = {None: template_part(view["game"], TEMPLATE_DEPTH)}
        if engine.info.hidden_information:
            games.update((seat, template_part(engine.view(state, seat), TEMPLATE_DEPTH)) for seat in range(players))
        views = pack(view)
        if engine.info.hidden_information:
            # A seat's view has parts a spectator's has not (its screen, its bid): the first
            # seat's view of the same game too, last (nearest what is packed: most views
            # packed are seats').
            views += pack({"room": room, "game": engine.view(state, 0), "outcome": None})
        found = Dictionaries(pack(engine.snapshot(state)), views, legal.encode(), games)
    except Exception:  # a dictionary is an optimisation: never fail a room for it
        found = Dictionaries(b"", b"", b"")
    _DICTS[key] = found
    return found


def template_room(engine: Engine, players: int, state: Any) -> dict[str, Any]:
    """The room part of a new room of `engine` with `players` seats playing `state`,
    nobody named, in the order `RoomViews._room_part` (server.views) gives its keys:
    the room part of the views in the preset view dictionary."""
    return {"id": "", "game": engine.info.name, "rules": engine.info.rules, "players": players, "status": "playing",
            "seats": [{"seat": i, "name": None, "connected": True, "bot": None} for i in range(players)],
            "to_act": sorted(engine.to_act(state)), "deadline": None, "answered": [], "draw_offer": None}


def template_part(value: Any, depth: int) -> Part:
    """`value` as a template for `share_initial`: itself, its msgpack, and its entries'
    parts to `depth` levels of dicts."""
    children = {k: template_part(v, depth - 1) for k, v in value.items()} if depth and type(value) is dict else None
    return value, pack(value), children


def share_initial(view: Any, part: Part | None) -> Any:
    """`view` (an engine view of a room that has not played yet) with every part that
    is exactly (msgpack-equal) the template's replaced by the template's own object.

    New rooms of a game start alike, and until the first action their members' last
    views are kept whole (the idle sweep packs them later): with the template's parts
    (boards, supplies, empty maps) a new room holds only what differs. Views are read,
    never changed, so a shared part is safe; equal msgpack means the member is sent
    and diffed against exactly what it would have been. The template is a constant of
    the game (its seed-0 new game's views); a seat's view shares only with the same
    seat's template view, so no object holds more than that seat may see.

    `view` itself is not changed: a dict with a shared entry is a new (shallow) dict.
    One pass, bottom up: a dict of the template's levels is the template's when its
    keys come in the same order and every entry is; anything below them is compared
    by its msgpack, packed once."""
    if part is None:
        return view
    obj, packed, children = part
    if view is obj:
        return obj
    if type(view) is not type(obj):
        return view
    if children is None:
        return obj if pack(view) == packed else view
    shared: dict[str, Any] | None = None
    order = iter(children)
    whole = len(view) == len(children)  # then `order` cannot run out first
    for key, value in view.items():
        if whole and next(order) != key:  # msgpack keeps a map's order
            whole = False
        child = children.get(key)
        if child is None:
            whole = False
            continue
        new = share_initial(value, child)
        if new is not child[0]:
            whole = False
        if new is not value:
            if shared is None:
                shared = dict(view)
            shared[key] = new
    if whole:
        return obj
    return view if shared is None else shared


def pack_view(view: dict[str, Any], zdict: bytes = b"") -> bytes:
    """A member's last view as deflated msgpack (views are msgpack data: they are sent
    as such, so `unpack_view` gives back an equal document)."""
    return deflate(pack(view), zdict)


def unpack_view(data: bytes, zdict: bytes = b"") -> dict[str, Any]:
    view: dict[str, Any] = unpack(inflate(data, zdict))
    return view


def pack_state(engine: Engine, state: Any, zdict: bytes = b"") -> PackedState:
    """The engine state as its own snapshot (the form Redis keeps and rooms restore
    from after a failover), msgpack-encoded and deflated."""
    return PackedState(deflate(pack(engine.snapshot(state)), zdict))


def unpack_state(engine: Engine, data: bytes, zdict: bytes = b"") -> Any:
    """The state `pack_state` was given: `engine.restore` of its snapshot."""
    return engine.restore(unpack(inflate(data, zdict)))
