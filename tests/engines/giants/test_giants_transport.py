"""Phase 4: transport, points, erecting, headdresses, marking, looking (GI-18 … GI-23)."""

from __future__ import annotations

import pytest
from giants_builders import ENGINE, act, at_transport, legal_texts

from engines import IllegalActionError
from engines.giants.state import Statue

Q = (12, 4)


def moai(size: int, hex: tuple[int, int] = Q, front: int | None = 0,
         marker: int | None = None) -> Statue:
    return Statue("M", size, hex, front, marker)


def transports(state, seat: int = 0) -> list[str]:  # type: ignore[no-untyped-def]
    return [t for t in legal_texts(state, seat) if t.startswith("transport")]


def test_gi18_a_statue_cannot_enter_a_hex_with_too_little_strength() -> None:
    state = at_transport(3, board={(11, 4): {"w0": 2}, (10, 4): {"w0": 1}},
                         statues={"M1": moai(2)})
    assert transports(state) == ["transport M1 (12,4)>(11,4)"]
    with pytest.raises(IllegalActionError, match="too little strength"):
        act(state, 0, "transport M1 (12,4)>(11,4)>(10,4)")
    state, events = act(state, 0, "transport M1 (12,4)>(11,4)")
    assert state.statues["M1"].hex == (11, 4) and state.statues["M1"].front is None
    assert state.board[(11, 4)]["w0"] == [2, 2]
    assert events[0]["uses"] == [["w0", "w0"]]


def test_gi18_logs_without_a_figure_carry_nothing() -> None:
    state = at_transport(3, board={(11, 4): {"l": 2}}, statues={"M1": moai(1)})
    assert transports(state) == []
    with pytest.raises(IllegalActionError):
        act(state, 0, "transport M1 (12,4)>(11,4)=l")
    # with a figure in the hex the logs count (and cost nobody anything)
    state = at_transport(3, board={(11, 4): {"l": 2, "w1": 1}}, statues={"M1": moai(2)})
    state, events = act(state, 0, "transport M1 (12,4)>(11,4)")
    assert events[0]["uses"] == [["l", "l"]] and events[0]["points"] == {}


def test_gi18_each_piece_carries_once_per_turn() -> None:
    state = at_transport(3, board={(11, 4): {"w0": 1}},
                         statues={"M1": moai(1), "M2": moai(1)})
    state.passed = [False, True, True]  # seat 0 acts again next
    state, _ = act(state, 0, "transport M1 (12,4)>(11,4)")
    assert state.current == 0
    assert transports(state) == []
    with pytest.raises(IllegalActionError):
        act(state, 0, "transport M2 (12,4)>(11,4)")


def test_gi18_paths_are_simple_and_adjacent() -> None:
    board = {(11, 4): {"w0": 2}, (11, 3): {"w0": 2}, (12, 3): {"w0": 2}}
    state = at_transport(3, board=board, statues={"M1": moai(1)})
    with pytest.raises(IllegalActionError, match="repeats"):
        act(state, 0, "transport M1 (12,4)>(11,4)>(11,3)>(11,4)")
    with pytest.raises(IllegalActionError, match="next to"):
        act(state, 0, "transport M1 (12,4)>(10,4)")
    with pytest.raises(IllegalActionError):
        act(state, 0, "transport M1 (11,4)>(10,4)")  # not where it stands


def test_gi18_canonical_list_has_each_reachable_destination_once() -> None:
    board = {(11, 4): {"w0": 1}, (10, 4): {"w1": 1}, (9, 4): {"l": 1, "s2": 1}, (11, 3): {"w0": 1}}
    state = at_transport(3, board=board, statues={"M1": moai(1)})
    assert transports(state) == [
        "transport M1 (12,4)>(11,3)",  # destinations in (row, col) order
        "transport M1 (12,4)>(11,4)>(10,4)>(9,4)",
        "transport M1 (12,4)>(11,4)>(10,4)",
        "transport M1 (12,4)>(11,4)",
    ]


def test_gi18_default_assignment_spares_opponents_then_own_figures() -> None:
    state = at_transport(3, board={(11, 4): {"w0": 1, "w1": 1, "c2": 1}}, statues={"M1": moai(1)})
    state, events = act(state, 0, "transport M1 (12,4)>(11,4)")
    assert events[0]["uses"] == [["w0"]]
    state = at_transport(3, board={(11, 4): {"w0": 3, "c0": 1}}, statues={"M1": moai(3)})
    state, events = act(state, 0, "transport M1 (12,4)>(11,4)")
    assert events[0]["uses"] == [["c0"]]  # one own figure rather than three


def test_gi18_an_explicit_assignment_is_obeyed() -> None:
    state = at_transport(3, board={(11, 4): {"w0": 1, "w1": 1}}, statues={"M1": moai(1)})
    state, _events = act(state, 0, "transport M1 (12,4)>(11,4)=w1")
    assert state.seats[1].points == 1 and state.board[(11, 4)]["w0"] == [1, 0]
    with pytest.raises(IllegalActionError):
        act(at_transport(3, board={(11, 4): {"w1": 1}}, statues={"M1": moai(2)}),
            0, "transport M1 (12,4)>(11,4)=w1")


def test_gi19_transport_points_for_a_chief_are_the_statue_size() -> None:
    state = at_transport(3, board={(11, 4): {"c1": 1}, (10, 4): {"w2": 2}},
                         statues={"M1": moai(2)})
    state, events = act(state, 0, "transport M1 (12,4)>(11,4)>(10,4)")
    assert [p.points for p in state.seats] == [0, 2, 2]
    assert events[0]["points"] == {"1": 2, "2": 2}
    state = at_transport(3, board={(11, 4): {"c1": 1}}, statues={"M1": moai(3)})
    state, _ = act(state, 0, "transport M1 (12,4)>(11,4)")
    assert state.seats[1].points == 3  # a chief used gives its full 3, scores the size


def test_gi19_own_figures_and_logs_score_nothing() -> None:
    state = at_transport(3, board={(11, 4): {"w0": 1, "l": 1}}, statues={"M1": moai(2)})
    state, _ = act(state, 0, "transport M1 (12,4)>(11,4)")
    assert [p.points for p in state.seats] == [0, 0, 0]


def test_gi19_a_neutral_worker_marked_by_the_opponent_scores_for_them() -> None:
    state = at_transport(2, board={(11, 4): {"n1": 1}, (10, 4): {"n": 1}},
                         statues={"M1": moai(1)})
    state, _ = act(state, 0, "transport M1 (12,4)>(11,4)>(10,4)")
    assert [p.points for p in state.seats] == [0, 1]  # the unmarked one scores nobody
    state = at_transport(2, board={(11, 4): {"n0": 1}}, statues={"M1": moai(1)})
    state, _ = act(state, 0, "transport M1 (12,4)>(11,4)")
    assert [p.points for p in state.seats] == [0, 0]  # your own marker: nothing


def erect_setup(reserved: int | None = None, worker: str = "w0"):  # type: ignore[no-untyped-def]
    # (6,0) touches A04 and A05; (7,0) touches A05 and A06.
    state = at_transport(3, board={(7, 0): {worker: 1}},
                         statues={"M1": moai(2, (6, 0), front=None)})
    state.ahu["A05"].reserved = reserved
    if reserved is not None:
        state.seats[reserved].bases -= 1
    return state


def test_gi20_erect_with_a_worker_next_to_a_free_ahu() -> None:
    state = erect_setup()
    assert "erect M1 A05" in legal_texts(state, 0)
    assert "erect M1 A04" not in legal_texts(state, 0)  # no worker of seat 0 next to A04
    state, events = act(state, 0, "erect M1 A05")
    a = state.ahu["A05"]
    assert (a.owner, a.size, a.reserved) == (0, 2, None)
    assert state.seats[0].bases == 5 and "M1" not in state.statues
    assert events == ({"type": "erect", "statue": "M1", "ahu": "A05", "size": 2},)


def test_gi20_erect_on_an_ahu_reserved_by_someone_else_is_illegal() -> None:
    state = erect_setup(reserved=1)
    assert "erect M1 A05" not in legal_texts(state, 0)
    with pytest.raises(IllegalActionError, match="reserved"):
        act(state, 0, "erect M1 A05")


def test_gi20_erect_on_your_own_reservation_uses_that_base() -> None:
    state = erect_setup(reserved=0)
    state, _ = act(state, 0, "erect M1 A05")
    assert state.seats[0].bases == 5 and state.ahu["A05"].owner == 0


def test_gi20_the_sorcerer_is_not_a_worker_for_erecting() -> None:
    state = erect_setup(worker="s0")
    with pytest.raises(IllegalActionError, match="workers"):
        act(state, 0, "erect M1 A05")


def test_gi21_a_headdress_goes_on_any_erected_moai() -> None:
    state = at_transport(3, board={(7, 0): {"w0": 1}},
                         statues={"H1": Statue("H", 1, (6, 0), None, None)})
    state.ahu["A05"].size, state.ahu["A05"].owner = 2, 1
    state, _ = act(state, 0, "headdress H1 A05")
    assert state.ahu["A05"].headdress and "H1" not in state.statues
    state = at_transport(3, board={(7, 0): {"w0": 1}},
                         statues={"H1": Statue("H", 1, (6, 0), None, None)})
    with pytest.raises(IllegalActionError):
        act(state, 0, "headdress H1 A05")  # no Moai there yet


def test_gi22_a_marked_statue_moves_only_for_its_marker() -> None:
    board = {(11, 4): {"w0": 1, "w1": 1}, (10, 4): {"w1": 1}}
    state = at_transport(3, board=board, statues={"M1": moai(1, (11, 4), front=None)})
    state, _ = act(state, 0, "mark M1")
    assert state.statues["M1"].marker == 0 and state.seats[0].markers == 1
    assert transports(state, 1) == [] and "mark M1" not in legal_texts(state, 1)
    with pytest.raises(IllegalActionError, match="not yours"):
        act(state, 1, "transport M1 (11,4)>(10,4)")


def test_gi23_looking_under_shows_the_owner_to_the_payer_only() -> None:
    state = at_transport(3, current=1)
    state.ahu["A05"].size, state.ahu["A05"].owner = 2, 0
    state.seats[1].tablets = 1
    assert "owner" not in ENGINE.view(state, 1)["ahu"]["A05"]
    assert ENGINE.view(state, 0)["ahu"]["A05"]["owner"] == 0
    state, events = act(state, 1, "look A05")
    assert events == ({"type": "look", "seat": 1, "ahu": "A05"},)
    assert ENGINE.view(state, 1)["ahu"]["A05"]["owner"] == 0
    assert "owner" not in ENGINE.view(state, 2)["ahu"]["A05"]
    assert "owner" not in ENGINE.view(state, None)["ahu"]["A05"]
    assert state.seats[1].tablets == 0


def test_gi18_named_and_default_pieces_mix_along_a_path() -> None:
    board = {(11, 4): {"w0": 1, "w1": 1}, (10, 4): {"w2": 1, "n": 1}}
    state = at_transport(3, board=board, statues={"M1": moai(1)})
    state, events = act(state, 0, "transport M1 (12,4)>(11,4)=w1>(10,4)")
    assert events[0]["uses"] == [["w1"], ["n"]]  # named, then the free neutral worker
    assert [p.points for p in state.seats] == [0, 1, 0]
