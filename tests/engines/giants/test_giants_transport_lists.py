"""Phase 4's legal list and default pieces (GI-18, GI-19) against the rules written out
plainly, in every phase-4 state of random games (fixed seeds): `best_use` (pieces taken
kind by kind) against a search of every choice of pieces, the entering costs of every
size found in one pass over the hexes, and the list (routes found once per hex and
size, written directly as notation) against each statue's own search, formatted
(engines/giants/strength.py and transport.py)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from giants_builders import ENGINE, random_turns
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.giants.actions import Crown, Erect, Look, Mark, Pass, Transport, format_action
from engines.giants.board import ISLAND, format_hex
from engines.giants.state import TRANSPORT, GameState
from engines.giants.strength import _unit_key, best_use, enter_costs_by_size
from engines.giants.transport import _routes_from, _search, may_move, routes, sort_sids

Cost = tuple[int, int, int, int]


def _plain_use(tokens: dict[str, list[int]], mover: int, size: int, players: int) -> tuple[Cost, tuple[str, ...]] | None:
    """GI-18/GI-19: of every choice of unused pieces in the hex with strength >= size
    (worker, sorcerer, neutral 1, chief 3, log 1 and logs only where a figure stands),
    the least (points to others, own figures, logs, pieces); DECIDED ties: single pieces
    before a chief alone, then the fixed piece order (`_unit_key`). (More than `size` of
    one kind never helps: each piece adds to the cost.)"""
    figure_here = any(t[0] in "wscn" for t in tokens)
    kinds = [(t, min(c - u, size)) for t, (c, u) in tokens.items() if c > u and (t != "l" or figure_here)]
    best: tuple[Any, ...] | None = None
    for counts in itertools.product(*(range(k + 1) for _, k in kinds)):
        strength = points = own = logs = pieces = 0
        chosen: list[tuple[Any, str]] = []
        chief = False
        for (token, _), n in zip(kinds, counts, strict=True):
            if not n:
                continue
            kind, owner = token[0], int(token[1:]) if len(token) > 1 else None
            strength += (3 if kind == "c" else 1) * n
            pieces += n
            logs += n if kind == "l" else 0
            if owner is not None and owner != mover:
                points += (size if kind == "c" else 1) * n  # GI-19
            elif owner == mover and kind in "wsc":
                own += n
            chief = chief or kind == "c"
            chosen += [((9,) if kind == "c" else _unit_key(token, mover, players), token)] * n
        if strength >= size:
            option = ((points, own, logs, pieces), chief, sorted(chosen))
            if best is None or option < best:
                best = option
    if best is None:
        return None
    return best[0], tuple(t for _, t in best[2])


def _plain_list(state: GameState, seat: int) -> list[str]:
    """GI-18 … GI-23, statue by statue: each statue's own cheapest routes, erects,
    headdresses; marks; looks; pass — as the engine listed them, formatted."""
    p = state.seats[seat]
    out: list[Any] = []
    sids = sorted(state.statues, key=lambda s: (s[0], int(s[1:])))
    for sid in sids:
        statue = state.statues[sid]
        if not may_move(statue, seat):
            continue
        reach = routes(state, sid, seat)
        out += [Transport(sid, tuple(reach[c]), None) for c in sorted(reach, key=lambda c: (c[1], c[0]))]
        for aid in ISLAND.ahu_near.get(statue.hex, ()):
            st = state.ahu[aid]
            if not any(state.board.get(c, {}).get(f"w{seat}", (0, 0))[0] > 0 for c in ISLAND.ahu_by_id[aid].adjacent):
                continue
            if statue.kind == "M" and st.size == 0 and st.reserved in (None, seat) and (st.reserved == seat or p.bases > 0):
                out.append(Erect(sid, aid))
            if statue.kind == "H" and st.size > 0 and not st.headdress:
                out.append(Crown(sid, aid))
    if p.markers > 0:
        out += [Mark(sid) for sid in sids if state.statues[sid].front is None and state.statues[sid].marker is None]
    if p.tablets > 0:
        out += [Look(a.id) for a in ISLAND.ahu if state.ahu[a.id].size and state.ahu[a.id].owner != seat
                and a.id not in p.looked]
    out.append(Pass())
    return [format_action(a) for a in out]


@pytest.mark.parametrize(("players", "seed"), [(2, 3), (3, 17), (5, 8)])
def test_transport_lists_and_default_pieces_are_the_rule(players: int, seed: int) -> None:
    seen = shared = 0
    for state, seat, legal in random_turns(players, seed):
        if state.phase == TRANSPORT:
            assert legal == _plain_list(state, seat)
            for mover in range(players):
                by_size = enter_costs_by_size(state, mover, (1, 2, 3))
                for size in (1, 2, 3):
                    plain = {cell: _plain_use(tokens, mover, size, players) for cell, tokens in state.board.items()}
                    for tokens, found in zip(state.board.values(), plain.values(), strict=True):
                        assert best_use(tokens, mover, size, players) == found
                    assert by_size[size] == {cell: found[0] for cell, found in plain.items() if found is not None}
            seen += 1
            movable = [(st.hex, st.size) for st in state.statues.values() if may_move(st, seat)]
            shared += len(movable) > len(set(movable))
    assert seen > 20 and shared > 0  # some statues of one size shared a hex


def test_no_size_asked_costs_no_look_at_the_board() -> None:
    """Nothing movable (no size asked for): no entering costs, and a list of the rest."""
    state = ENGINE.new_game(2, {}, 5)
    assert enter_costs_by_size(state, 0, ()) == {}
    assert enter_costs_by_size(state, 0, (1, 2)) == {1: {}, 2: {}}  # nobody stands anywhere yet


def _plain_routes(start: Any, enter: dict[Any, Cost]) -> dict[Any, list[Any]]:
    """The search as written before `_search` (session 17): Dijkstra over entering costs
    (GI-18: every hex entered must carry the statue; the default pieces' cost), each
    route walked back from its end."""
    import heapq

    zero = (0, 0, 0, 0)
    best: dict[Any, Cost] = {start: zero}
    parent: dict[Any, Any] = {}
    heap: list[tuple[Cost, Any]] = [(zero, start)]
    while heap:
        cost, cell = heapq.heappop(heap)
        if best.get(cell) != cost:
            continue
        for nb in ISLAND.neighbors[cell]:
            step = enter.get(nb)
            if step is None or nb == start:
                continue
            new = (cost[0] + step[0], cost[1] + step[1], cost[2] + step[2], cost[3] + step[3])
            old = best.get(nb)
            if old is None or new < old:
                best[nb] = new
                parent[nb] = cell
                heapq.heappush(heap, (new, nb))
    out: dict[Any, list[Any]] = {}
    for cell in best:
        if cell != start:
            path = [cell]
            while path[-1] != start:
                path.append(parent[path[-1]])
            out[cell] = path[::-1]
    return out


@pytest.mark.parametrize(("players", "seed"), [(2, 4), (2, 11), (3, 5), (4, 9), (5, 2)])
def test_searches_and_route_texts_are_the_plain_search(players: int, seed: int) -> None:
    """GI-18: `_search` (settled order, routes as texts built from the previous hex's)
    gives the plain search's routes, dict order included, from every hex a statue stands
    on, for every mover and size, with costs given whole or filled in as looked at; and
    the notation list is `actions` formatted, entry for entry."""
    seen = reached = 0
    for state, seat, legal in random_turns(players, seed):
        if state.phase == TRANSPORT:
            assert legal == [format_action(a) for a in ENGINE.legal_actions(state, seat)]
            starts = {st.hex for st in state.statues.values()}
            for mover in range(players):
                by_size = enter_costs_by_size(state, mover, (1, 2, 3))
                for size in (1, 2, 3):
                    for start in starts:
                        plain = _plain_routes(start, by_size[size])
                        got = _routes_from(start, by_size[size])
                        assert list(got.items()) == list(plain.items())
                        filled: dict[Any, Any] = {}
                        cells: dict[Any, Cost] = by_size[size]
                        best, parent, settled = _search(start, filled, cells.get)
                        assert best.keys() - {start} == set(settled) == set(plain)
                        assert all(filled[c] == cells.get(c) for c in filled)
                        order = {start: -1, **{cell: i for i, cell in enumerate(settled)}}
                        assert all(order[parent[cell]] < order[cell] for cell in settled)  # each after its previous hex
                        texts = {start: format_hex(start)}
                        for cell in settled:
                            texts[cell] = texts[parent[cell]] + ">" + format_hex(cell)
                        assert {c: texts[c] for c in plain} == {c: ">".join(map(format_hex, p)) for c, p in plain.items()}
                        reached += len(plain)
            seen += 1
    assert seen > 10 and reached > 20


@given(st.lists(st.tuples(st.sampled_from("MHXa\u00e9"), st.integers(-3, 2**42)), max_size=30))
@settings(max_examples=300, deadline=None)
def test_statue_ids_sort_in_listing_order(ids: list[tuple[str, int]]) -> None:
    """`sort_sids` puts statue ids in `_sid_key` order (kind, then number), numbers
    beyond its int ranks (negative, 2**40 and up) included."""
    sids = [f"{kind}{number}" for kind, number in ids]
    got = list(sids)
    sort_sids(got)
    assert got == sorted(sids, key=lambda s: (s[0], int(s[1:])))
