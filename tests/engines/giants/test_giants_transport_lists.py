"""Phase 4's legal list and default pieces (GI-18, GI-19) against the rules written out
plainly, in every phase-4 state of random games (fixed seeds): `best_use` (pieces taken
kind by kind) against a search of every choice of pieces, the entering costs of every
size found in one pass over the hexes, and the list (routes found once per hex and
size, written directly as notation) against each statue's own search, formatted."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from giants_builders import ENGINE

from engines.giants.actions import Crown, Erect, Look, Mark, Pass, Transport, format_action
from engines.giants.board import ISLAND
from engines.giants.state import TRANSPORT, GameState
from engines.giants.transport import _unit_key, best_use, enter_costs_by_size, may_move, routes

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
    rng = random.Random(seed)
    state = ENGINE.new_game(players, {}, seed)
    seen = shared = 0
    while ENGINE.outcome(state) is None:
        seat = rng.choice(sorted(ENGINE.to_act(state)))
        legal = ENGINE.legal_notation(state, seat)
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
        state = ENGINE.apply_text(state, seat, rng.choice(legal)).state
    assert seen > 20 and shared > 0  # some statues of one size shared a hex


def test_no_size_asked_costs_no_look_at_the_board() -> None:
    """Nothing movable (no size asked for): no entering costs, and a list of the rest."""
    state = ENGINE.new_game(2, {}, 5)
    assert enter_costs_by_size(state, 0, ()) == {}
    assert enter_costs_by_size(state, 0, (1, 2)) == {1: {}, 2: {}}  # nobody stands anywhere yet
