"""Giant's Causeway, rule set `barrier`, rule by rule (shared/specs/causeway.md GC-1 … GC-B11)."""

from __future__ import annotations

import pytest
from causeway_position import cell, engine, events, giants, legal, play, position, stacks

from engines import GameOverError, IllegalActionError, NotYourTurnError, get_engine
from engines.causeway import Barrier

R = "barrier"
E = engine(R)


def test_barrier_is_the_default_rule_set_of_causeway() -> None:
    assert isinstance(get_engine("causeway"), Barrier)


# -- geometry ------------------------------------------------------------------


def test_gc1_leaps_follow_the_six_axial_directions() -> None:
    # A white giant in the middle of a ring of stacks can leap in all six directions,
    # each landing two cells away along that direction.
    state = position(R, "0,0:@w 1,0:w 1,-1:b 0,-1:w -1,0:b -1,1:w 0,1:b 1,1:@b")
    landings = {}
    for name, (dq, dr) in zip(("e", "ne", "nw", "w", "sw", "se"), ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1)), strict=True):
        leap = f"0,0^{name}+{dq},{dr}"
        assert leap in legal(R, state)
        after = play(R, state, leap)
        landings[name] = next(c for c, g in giants(after).items() if g[0] == 0)
        assert landings[name] == f"{2 * dq},{2 * dr}"


def test_gc2_a_giant_never_shares_a_cell() -> None:
    state = position(R, "0,0:w 1,0:b -1,0:@w 2,0:@b")
    targets = {m.split(">")[1] for m in legal(R, state) if ">" in m}
    assert targets.isdisjoint({"0,0", "1,0", "2,0", "-1,0"})
    with pytest.raises(IllegalActionError):
        play(R, state, "-1,0>2,0")


def test_gc3_a_leap_that_would_split_the_causeway_is_illegal() -> None:
    # The white giant on 0,0 links the west part (-1,0 and the black giant) to 1,0.
    state = position(R, "0,0:@w 1,0:w -1,0:b -2,0:@b")
    assert not any(m.startswith("0,0^e") for m in legal(R, state))
    with pytest.raises(IllegalActionError, match="splitting"):
        play(R, state, "0,0^e+1,0")
    # With a bridge round the south side the same leap keeps one Causeway.
    bridged = position(R, "0,0:@w 1,0:w -1,0:b -2,0:@b 0,1:w -1,1:b")
    assert "0,0^e+1,0" in legal(R, bridged)


def test_gc4_white_moves_first_and_seats_are_colours() -> None:
    state = E.new_game(2, {}, seed=5)
    assert E.to_act(state) == frozenset({0})
    view = E.view(state, None)
    assert view["seats"] == {"white": 0, "black": 1} and "to_move" not in view  # the room's to_act says it
    assert E.state_from_view(view).to_move == 0
    with pytest.raises(NotYourTurnError):
        E.apply(state, 1, E.legal_actions(state, 0)[0])


# -- setup ---------------------------------------------------------------------


def test_gcb1_setup_starts_with_one_blank_each() -> None:
    state = E.new_game(2, {}, seed=0)
    assert stacks(state) == {"0,0": "w", "1,0": "b"}
    assert state.giants == {} and state.supply == (20, 20)


def test_gcb2_six_placement_turns_in_any_order_then_19_blanks_each() -> None:
    state = E.new_game(2, {}, seed=0)
    first = legal(R, state)
    around = {"1,-1", "0,-1", "-1,0", "-1,1", "0,1", "2,0", "2,-1", "1,1"}
    assert first == {f"{p}@{c}" for p in ("giant", "blank") for c in around}
    state = play(R, state, "giant@2,0")
    # 3,0 touches only the white giant: a blank may go there, a giant may not.
    assert "blank@3,0" in legal(R, state) and "giant@3,0" not in legal(R, state)
    with pytest.raises(IllegalActionError):
        play(R, state, "giant@3,0")
    state = play(R, state, "blank@3,0", "blank@-1,0", "giant@4,0", "giant@-2,0", "giant@0,1")
    assert state.phase == "play" and state.supply == (19, 19)
    assert E.to_act(state) == frozenset({0})
    assert sorted(giants(state).values()) == [(0, "giant")] * 2 + [(1, "giant")] * 2
    with pytest.raises(IllegalActionError, match="setup"):
        play(R, state, "blank@5,0")


def test_gcb2_a_player_places_no_more_than_two_giants() -> None:
    state = E.new_game(2, {}, seed=0)
    state = play(R, state, "giant@2,0", "blank@-1,0", "giant@-1,1", "giant@-2,0")
    assert all(m.startswith("blank@") for m in legal(R, state))


# -- trapping and steps --------------------------------------------------------


def test_gcb3_trapped_when_the_adjacent_opponent_giant_touches_nothing_else() -> None:
    trapped = position(R, "0,0:w 1,0:b -1,0:@b -2,0:@w 2,0:@w", to_move=1)
    assert E.is_trapped(trapped, cell("-1,0"), 1)
    # Once the white giant touches a stone too, the black giant is free again.
    free = position(R, "0,0:w 1,0:b -1,0:@b -2,0:@w 2,0:@w -2,-1:w -1,-1:b", to_move=1)
    assert not E.is_trapped(free, cell("-1,0"), 1)


def test_gcb4_step_lays_a_blank_and_teleports_next_to_the_causeway_holes_included() -> None:
    ring = "1,0:w 1,-1:b 0,-1:w -1,0:b -1,1:w 0,1:b"
    state = position(R, ring + " 2,0:@w -2,0:@b")
    moves = legal(R, state)
    assert {"2,0>0,0", "2,0>-3,0", "2,0>2,-1", "2,0>1,1", "2,0>3,0"} <= moves  # 0,0 is an enclosed hole
    assert "2,0>5,0" not in moves  # touches nothing
    after = play(R, state, "2,0>0,0")
    assert stacks(after)["2,0"] == "w" and giants(after)["0,0"] == (0, "giant")
    assert after.supply == (14, 15)


def test_gcb4_stepping_next_to_a_lone_opponent_giant_traps_it_and_it_escapes_beside_its_blank() -> None:
    state = position(R, "1,0:w 1,-1:b 0,-1:w -1,0:b -1,1:w 0,1:b 2,0:@w -2,0:@b")
    assert events(R, state, "2,0>-3,0")[0]["traps"] == "-2,0"
    state = play(R, state, "2,0>-3,0")  # -3,0 touches only the black giant
    assert E.is_trapped(state, cell("-2,0"), 1)
    assert legal(R, state) == {"-2,0>-1,-1", "-2,0>-2,-1", "-2,0>-3,1", "-2,0>-2,1"}
    with pytest.raises(IllegalActionError, match="trapped"):
        play(R, state, "-2,0>2,1")
    escaped = play(R, state, "-2,0>-2,1")
    assert stacks(escaped)["-2,0"] == "b"


def test_gcb4_a_step_needs_a_blank_in_supply() -> None:
    state = position(R, "0,0:w 1,0:b -1,0:@w 2,0:@b", supply=(0, 5))
    assert not any(">" in m for m in legal(R, state))


# -- leaps and drops -----------------------------------------------------------

LINE = "-1,0:@w 0,0:b 1,0:{mid} 2,0:w 0,-1:@b"


def test_gcb5_leap_runs_to_the_first_empty_cell_over_own_barriers() -> None:
    state = position(R, LINE.format(mid="bbW"))
    east = {m for m in legal(R, state) if m.startswith("-1,0^e")}
    assert east == {"-1,0^e+0,0", "-1,0^e+2,0", "-1,0^e+0,0+2,0"}
    evs = events(R, state, "-1,0^e+2,0")
    assert evs[0]["type"] == "leap" and evs[0]["to"] == "3,0"
    assert evs[0]["over"] == ["0,0", "1,0", "2,0"]


@pytest.mark.parametrize("mid", ["wwB", "@b", "@w"])
def test_gcb5_opponent_barriers_and_giants_block_a_leap(mid: str) -> None:
    state = position(R, LINE.format(mid=mid))
    assert not any(m.startswith("-1,0^e") for m in legal(R, state))
    with pytest.raises(IllegalActionError):
        play(R, state, "-1,0^e+0,0")


def test_gcb5_a_trapped_giant_cannot_leap() -> None:
    # Black on -1,0 is trapped by the white giant on -2,0; its leap east is otherwise open.
    state = position(R, "0,0:w 1,0:b -1,0:@b -2,0:@w 1,1:@w -2,1:w", to_move=1)
    assert E.is_trapped(state, cell("-1,0"), 1) is False  # -2,1 touches the white giant
    state = position(R, "0,0:w 1,0:b -1,0:@b -2,0:@w 1,1:@w", to_move=1)
    assert E.is_trapped(state, cell("-1,0"), 1)
    assert not any("^" in m for m in legal(R, state))
    with pytest.raises(IllegalActionError, match="trapped"):
        play(R, state, "-1,0^e+0,0")


def test_gcb6_must_drop_one_or_two_on_distinct_jumped_stacks() -> None:
    state = position(R, LINE.format(mid="b"))
    east = {m for m in legal(R, state) if m.startswith("-1,0^e")}
    assert east == {
        "-1,0^e+0,0", "-1,0^e+1,0", "-1,0^e+2,0",
        "-1,0^e+0,0+1,0", "-1,0^e+0,0+2,0", "-1,0^e+1,0+2,0",
    }
    for bad in ("-1,0^e", "-1,0^e+0,0+0,0", "-1,0^e+2,0+0,0", "-1,0^e+0,-1"):
        with pytest.raises(IllegalActionError):
            play(R, state, bad)
    after = play(R, state, "-1,0^e+0,0+2,0")
    assert stacks(after)["0,0"] == "bw" and stacks(after)["2,0"] == "ww"
    assert after.supply == (13, 15)


def test_gcb6_two_drops_need_two_blanks_and_none_only_over_full_stacks() -> None:
    short = position(R, LINE.format(mid="b"), supply=(1, 15))
    assert not any(m.count("+") == 2 for m in legal(R, short))
    full = position(R, "-1,0:@w 0,0:bbw 1,0:wwb 0,-1:@b")
    assert {m for m in legal(R, full) if "^" in m} == {"-1,0^e"}


def test_gcb7_completing_with_one_own_lower_stone_wins_the_tower() -> None:
    state = position(R, "-1,0:@w 0,0:bw 0,-1:@b")
    after = play(R, state, "-1,0^e+0,0")
    assert stacks(after)["0,0"] == "bww" and after.won == {(0, 0): 0}
    assert after.supply == (14, 15)
    assert E.view(after, None)["towers"] == {"white": 1, "black": 0}


def test_gcb7_completing_on_two_opponent_stones_puts_a_barrier_and_returns_the_blank() -> None:
    state = position(R, "-1,0:@w 0,0:bb 0,-1:@b")
    evs = events(R, state, "-1,0^e+0,0")
    after = play(R, state, "-1,0^e+0,0")
    assert stacks(after)["0,0"] == "bbW" and after.won == {}
    assert after.supply == (15, 15)
    assert {"type": "barrier", "colour": "white", "cell": "0,0", "moved_from": None} in evs


def test_gcb7_a_fourth_barrier_moves_one_of_the_three_and_that_tower_falls_to_two() -> None:
    state = position(R, "-1,0:@w 0,0:bb 0,-1:@b 1,-1:bbW 2,-1:bbW 2,-2:bbW")
    east = {m for m in legal(R, state) if m.startswith("-1,0^e")}
    assert east == {"-1,0^e+0,0/1,-1", "-1,0^e+0,0/2,-1", "-1,0^e+0,0/2,-2"}
    with pytest.raises(IllegalActionError):
        play(R, state, "-1,0^e+0,0")
    after = play(R, state, "-1,0^e+0,0/2,-1")
    assert stacks(after)["2,-1"] == "bb" and stacks(after)["0,0"] == "bbW"
    assert E.view(after, None)["specials"]["white"] == 3


def test_gcb7_two_barrier_drops_resolve_in_order_and_may_move_the_first_new_barrier() -> None:
    state = position(R, "-1,0:@w 0,0:bb 1,0:bb 0,-1:@b 1,-1:bbW 2,-1:bbW 2,-2:bbW")
    east = {m for m in legal(R, state) if m.startswith("-1,0^e")}
    assert len(east) == 3 + 3 + 3 * 3  # each drop picks one of the three barriers on the board
    assert "-1,0^e+0,0/1,-1+1,0/0,0" in east
    after = play(R, state, "-1,0^e+0,0/1,-1+1,0/0,0")
    assert stacks(after)["1,-1"] == "bb" and stacks(after)["0,0"] == "bb"
    assert stacks(after)["1,0"] == "bbW" and after.supply == (15, 15)


def test_gcb8_a_full_stack_takes_no_drop_but_can_be_leapt() -> None:
    state = position(R, "-1,0:@w 0,0:bww 1,0:b 0,-1:@b")
    east = {m for m in legal(R, state) if m.startswith("-1,0^e")}
    assert east == {"-1,0^e+1,0"}
    with pytest.raises(IllegalActionError):
        play(R, state, "-1,0^e+0,0")


# -- the end -------------------------------------------------------------------


def test_gcb9_a_third_won_tower_wins_at_once_and_later_drops_are_void() -> None:
    state = position(
        R, "-1,0:@w 0,0:bw 1,0:wb 1,-1:bww 2,-1:bww 0,-1:@b", won="1,-1:w 2,-1:w"
    )
    after = play(R, state, "-1,0^e+0,0+1,0")
    outcome = E.outcome(after)
    assert outcome is not None and outcome.reason == "three_towers"
    assert outcome.winners == (0,) and outcome.scores == (3.0, 0.0)
    assert stacks(after)["1,0"] == "wb" and after.supply == (14, 15)
    with pytest.raises(GameOverError):
        play(R, after, "2,0>3,0")


def test_gcb10_running_out_of_blanks_ends_after_the_mover_destroys_a_won_tower() -> None:
    state = position(R, "-1,0:@w 0,0:b 1,-1:bww 2,-1:wwB 0,-1:@b", supply=(1, 9), won="1,-1:w")
    after = play(R, state, "-1,0>-2,0")
    assert after.phase == "destroy" and E.outcome(after) is None
    assert E.to_act(after) == frozenset({0})
    assert legal(R, after) == {"destroy@1,-1"}
    done = play(R, after, "destroy@1,-1")
    outcome = E.outcome(done)
    assert outcome is not None and outcome.reason == "out_of_stones"
    # 0-0 towers; Black's barrier on the board breaks the tie.
    assert outcome.scores == (0.0, 0.0) and outcome.winners == (1,)
    assert E.view(done, None)["destroyed"] == {"1,-1": "white"}


def test_gcb10_without_a_won_tower_the_game_ends_at_once_and_a_full_tie_is_a_draw() -> None:
    state = position(R, "-1,0:@w 0,0:b 0,-1:@b", supply=(1, 9))
    after = play(R, state, "-1,0>-2,0")
    outcome = E.outcome(after)
    assert outcome is not None and outcome.reason == "out_of_stones" and outcome.winners == (0, 1)


def test_gcb11_a_third_repetition_ends_the_game() -> None:
    state = position(R, "0,0:@w 1,0:wwb 1,1:bbw 0,1:@b")
    cycle = ("0,0^e", "0,1^e", "2,0^w", "2,1^w")
    state = play(R, state, *cycle, *cycle[:3])
    assert E.outcome(state) is None
    assert E.state_from_view(E.view(state, None)).history == state.history
    state = play(R, state, cycle[3])
    outcome = E.outcome(state)
    assert outcome is not None and outcome.reason == "repetition" and outcome.winners == (0, 1)


def test_gcb11_the_game_ends_after_200_plies() -> None:
    state = position(R, "0,0:w 1,0:b -1,0:@w 2,0:@b", ply=199)
    outcome = E.outcome(play(R, state, "-1,0>-2,0"))
    assert outcome is not None and outcome.reason == "ply_limit"
    assert E.info.max_plies == 201  # the cap plus a possible GC-B10 destroy step


# -- views, notation -----------------------------------------------------------


def test_views_are_the_same_for_every_seat_and_rebuild_the_state() -> None:
    state = position(R, "-1,0:@w 0,0:bb 0,-1:@b 1,-1:bbW", won="")
    view = E.view(state, None)
    assert E.view(state, 0) == view == E.view(state, 1)
    assert view["stacks"]["1,-1"] == "bbW" and view["giants"]["-1,0"] == ["white", "giant"]
    rebuilt = E.state_from_view(view)
    assert E.legal_actions(rebuilt, 0) == E.legal_actions(state, 0)
