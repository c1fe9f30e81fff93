"""Protocol 3's `legal_edit`: each seat rebuilds exactly its own legal list, at every step,
and nothing of a seat's list reaches another seat or a spectator.

A 2-player GIANTS game (hidden screens: the seats' lists differ, and a list may name
pieces behind its own screen) played by raw protocol-3 clients over real WebSockets,
then resigned; the engine replays the stored log and says what each seat's list was
after each action. A protocol-2 member of the same room gets whole lists only.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from engines import registry
from server.legal_lists import EDIT_FROM, list_bytes
from tests.server.raw_member import RawMember, member

pytestmark = pytest.mark.redis


async def test_each_seat_rebuilds_its_own_legal_list_and_no_other(giants_server: Any) -> None:
    url = giants_server.url
    seats = [await member(url, "ann"), await member(url, "bob")]
    watcher, old = await member(url, "sam"), await member(url, "old", protocol=2)
    room = (await seats[0].request("create_room", game="giants", players=2))["data"]["room"]
    for m in (watcher, old):
        assert (await m.request("watch", room=room))["type"] == "ok"
    for i, m in enumerate(seats):
        assert (await m.request("join", room=room, seat=i))["type"] == "ok"
    rng = random.Random(3)
    moves = 0

    def ready() -> list[RawMember]:
        return [m for m in seats if m.legal and m.seat not in m.view["room"]["answered"]]  # type: ignore[index]

    while moves < 160:
        assert all(m.view is not None for m in seats)
        if not ready():
            waits = [asyncio.ensure_future(m.wait_for(lambda: bool(ready()), 60)) for m in seats]
            await asyncio.wait(waits, timeout=5, return_when=asyncio.FIRST_COMPLETED)
            for w in waits:
                w.cancel()
            continue
        actor = ready()[0]
        reply = await actor.request("act", room=room, action=rng.choice(actor.legal))
        assert reply["type"] == "ok", reply  # the rebuilt list held only legal actions
        moves += 1
        while actor.acts < moves or any(m.acts < moves for m in (*seats, watcher, old)):
            await asyncio.sleep(0.01)
    played = [len(m.seen) for m in seats]  # the resignation's patch empties every list
    assert (await seats[1].request("resign", room=room))["type"] == "ok"
    replay = (await seats[0].request("replay", room=room))["data"]
    for m in (*seats, watcher, old):
        m.ws.close_timeout = 1
        await m.ws.close()

    # What each seat's legal list was after each action, from the stored log.
    engine = registry.get_engine("giants")
    state = engine.new_game(replay["players"], replay["options"], replay["seed"])
    truth = [[engine.legal_notation(state, s) if s in engine.to_act(state) else [] for s in (0, 1)]]
    for entry in replay["actions"][:moves]:
        state = engine.apply_text(state, entry["seat"], entry["action"]).state
        truth.append([engine.legal_notation(state, s) if s in engine.to_act(state) else [] for s in (0, 1)])
    # No seat ever held an action only the other seat could take. (In some random games
    # one seat's actions are all among the other's: then only the other seat's check
    # says something, so at least one of the two must have such actions.)
    only_other = []
    for seat, m in enumerate(seats):
        assert m.seen and all(legal == truth[acts][seat] for acts, legal in m.seen[: played[seat]])
        other = {a for row in truth for a in row[1 - seat]} - {a for row in truth for a in row[seat]}
        assert not other & {a for _, legal in m.seen for a in legal}
        only_other.append(other)
    assert any(only_other)
    # The edits were used; the protocol-2 member and the spectator never got a legal
    # list or an edit.
    # Long lists come as edits, short ones whole: an edit needs a long list after a
    # long base, and is sent unless it would not be smaller (rare). How many such
    # lists a seat gets depends on the room's random game (19-36 in 160 moves).
    for m in seats:
        can = editable(m.seen)
        assert 0 < m.edits <= can <= m.edits + max(2, can // 10), (m.edits, can)
    assert old.edits == watcher.edits == 0 and all(legal == [] for m in (old, watcher) for _, legal in m.seen)
    assert not any(m.odd for m in (*seats, watcher, old)), [m.odd for m in (*seats, watcher, old)]


async def test_a_protocol_2_seat_gets_whole_lists(giants_server: Any) -> None:
    url = giants_server.url
    ann, bob = await member(url, "ann", protocol=2), await member(url, "bob", protocol=2)
    room = (await ann.request("create_room", game="giantslayer", players=2))["data"]["room"]
    for i, m in enumerate((ann, bob)):
        assert (await m.request("join", room=room, seat=i))["type"] == "ok"
    for moves in range(1, 11):
        while not any(m.legal for m in (ann, bob)) or min(m.acts for m in (ann, bob)) < moves - 1:
            await asyncio.sleep(0.01)
        actor = ann if ann.legal else bob
        assert (await actor.request("act", room=room, action=actor.legal[0]))["type"] == "ok"
    while min(m.acts for m in (ann, bob)) < 10:
        await asyncio.sleep(0.01)
    assert ann.whole + bob.whole >= 9 and ann.edits == bob.edits == 0
    assert not ann.odd and not bob.odd
    for m in (ann, bob):
        await m.ws.close()


def editable(seen: list[tuple[int, list[str]]]) -> int:
    """How many of the lists a seat was sent could have come as an edit: a list of at
    least EDIT_FROM bytes sent (it differs from the one before, maybe []) while the
    seat's last non-empty list (the base) had at least EDIT_FROM bytes too."""
    count, previous, base = 0, None, None
    for _, legal in seen:
        sent = legal != previous
        if sent and legal and base is not None and min(list_bytes(legal), list_bytes(base)) >= EDIT_FROM:
            count += 1
        if legal:
            base = legal
        previous = legal
    return count
