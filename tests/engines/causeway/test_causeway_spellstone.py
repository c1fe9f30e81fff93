"""Giant's Causeway, rule sets `spellstone` and `quick` (shared/specs/causeway.md GC-S1 … GC-Q2)."""

from __future__ import annotations

import pytest
from causeway_position import cell, engine, events, giants, legal, play, position, stacks

from engines import IllegalActionError

S = "spellstone"
Q = "quick"
E = engine(S)
EQ = engine(Q)


# -- setup ---------------------------------------------------------------------


def test_gcs1_six_stones_then_giants_w_b_w_b_in_a_chosen_order_and_17_blanks() -> None:
    state = E.new_game(2, {}, seed=0)
    assert stacks(state) == {"0,0": "w", "1,-2": "w", "-1,-1": "w", "0,-1": "b", "1,0": "b", "-1,1": "b"}
    moves = legal(S, state)
    assert "trapper@0,1" in moves and "spikey@0,1" in moves
    assert not any(m.startswith(("blank@", "giant@")) for m in moves)
    state = play(S, state, "spikey@0,1")  # White chooses to place the spikey first
    assert "trapper@0,2" not in legal(S, state)  # 0,2 touches only a giant
    state = play(S, state, "trapper@2,-1", "trapper@-2,0", "spikey@1,1")
    assert state.phase == "play" and state.supply == (17, 17) and state.to_move == 0
    assert sorted(giants(state).values()) == [(0, "spikey"), (0, "trapper"), (1, "spikey"), (1, "trapper")]


# -- steps and trapping --------------------------------------------------------


def test_gcs2_steps_are_adjacent_and_the_slide_rule_closes_narrow_gaps() -> None:
    # 1,-1 and 0,1 are the two cells beside both 0,0 and 1,0: that gap is closed.
    state = position(S, "0,0:@ws 1,-1:w 0,1:b -1,2:@bs")
    steps = {m for m in legal(S, state) if ">" in m}
    assert steps == {"0,0>0,-1", "0,0>-1,0", "0,0>-1,1"}
    with pytest.raises(IllegalActionError):
        play(S, state, "0,0>1,0")
    after = play(S, state, "0,0>-1,0")
    assert stacks(after)["0,0"] == "w" and after.supply == (14, 15)


def test_gcs3_the_trapper_steps_beside_a_lone_opponent_giant_and_freezes_it() -> None:
    picture = "0,0:@w{k} 1,0:w 2,0:b 3,0:@bs 1,1:@bt"
    state = position(S, picture.format(k="t"))
    assert {"0,0>4,0", "0,0>4,-1", "0,0>3,1", "0,0>1,2"} <= legal(S, state)
    # The spikey has no trap step.
    assert "0,0>4,0" not in legal(S, position(S, picture.format(k="s")))
    assert events(S, state, "0,0>4,0")[0]["traps"] == "3,0"
    after = play(S, state, "0,0>4,0")
    assert stacks(after)["0,0"] == "w"
    assert E.is_trapped(after, cell("3,0"), 1)
    assert not any(m.startswith("3,0") for m in legal(S, after))  # no step, no leap
    with pytest.raises(IllegalActionError, match="trapped"):
        play(S, after, "3,0>3,-1")


# -- leaps and drops -----------------------------------------------------------

LINE = "-1,0:@ws 0,0:b 1,0:{mid} 2,0:w 0,-1:@bs"


def test_gcs4_trappers_and_own_spellstones_may_be_leapt_but_take_no_drop() -> None:
    for mid in ("@bt", "@wt", "bbW"):
        state = position(S, LINE.format(mid=mid))
        east = {m for m in legal(S, state) if m.startswith("-1,0^e")}
        assert east == {"-1,0^e", "-1,0^e+0,0", "-1,0^e+2,0", "-1,0^e+0,0+2,0"}, mid
        with pytest.raises(IllegalActionError):
            play(S, state, "-1,0^e+1,0")  # GC-2: never onto a giant or a full stack


def test_gc3_a_spellstone_leap_may_not_split_the_causeway() -> None:
    state = position(S, "0,0:@ws 1,0:w -1,0:b -2,0:@bs")
    assert not any(m.startswith("0,0^e") for m in legal(S, state))
    bridged = position(S, "0,0:@ws 1,0:w -1,0:b -2,0:@bs 0,1:w -1,1:b")
    assert "0,0^e" in legal(S, bridged)


def test_gcs4_reading_a_trapper_alone_can_be_leapt() -> None:
    state = position(S, "-1,0:@ws 0,0:@bt 0,-1:w -1,-1:b")
    assert "-1,0^e" in legal(S, state)
    assert giants(play(S, state, "-1,0^e"))["1,0"] == (0, "spikey")


@pytest.mark.parametrize("mid", ["@bs", "@ws", "wwB"])
def test_gcs4_spikey_giants_and_opponent_spellstones_block(mid: str) -> None:
    state = position(S, LINE.format(mid=mid))
    assert not any(m.startswith("-1,0^e") for m in legal(S, state))


def test_gcs5_drops_zero_one_or_two_limited_by_supply() -> None:
    state = position(S, LINE.format(mid="b"), supply=(1, 15))
    east = {m for m in legal(S, state) if m.startswith("-1,0^e")}
    assert east == {"-1,0^e", "-1,0^e+0,0", "-1,0^e+1,0", "-1,0^e+2,0"}
    empty = position(S, LINE.format(mid="b"), supply=(0, 15))
    assert {m for m in legal(S, empty) if m.startswith("-1,0")} == {"-1,0^e"}
    after = play(S, state, "-1,0^e")
    assert stacks(after) == stacks(state) and giants(after)["3,0"] == (0, "spikey")


def test_gcs6_a_majority_of_the_top_colour_scores_the_tower() -> None:
    state = position(S, "-1,0:@ws 0,0:wb 0,-1:@bs")
    after = play(S, state, "-1,0^e+0,0")
    assert stacks(after)["0,0"] == "wbw" and after.won == {(0, 0): 0}


def test_gcs6_no_majority_makes_a_spellstone_and_a_fourth_turns_an_old_one_around() -> None:
    state = position(S, "-1,0:@ws 0,0:bb 0,-1:@bs")
    evs = events(S, state, "-1,0^e+0,0")
    after = play(S, state, "-1,0^e+0,0")
    assert stacks(after)["0,0"] == "bbW" and after.supply == (15, 15) and after.won == {}
    assert evs[-1] == {"type": "spellstone", "colour": "white", "cell": "0,0", "turned": None}
    crowded = position(S, "-1,0:@ws 0,0:bb 0,-1:@bs 1,-1:bbW 2,-1:bbW 2,-2:bbW")
    east = {m for m in legal(S, crowded) if m.startswith("-1,0^e+")}
    assert east == {"-1,0^e+0,0/1,-1", "-1,0^e+0,0/2,-1", "-1,0^e+0,0/2,-2"}
    turned = play(S, crowded, "-1,0^e+0,0/2,-2")
    # The old spellstone becomes a white blank: a dead tower, neither scored nor spelled.
    assert stacks(turned)["2,-2"] == "bbw" and stacks(turned)["0,0"] == "bbW"
    assert turned.won == {} and E.view(turned, None)["specials"]["white"] == 3


def test_gcs7_the_third_scored_tower_wins() -> None:
    state = position(S, "-1,0:@ws 0,0:wb 1,-1:bww 2,-1:bww 0,-1:@bs", won="1,-1:w 2,-1:w")
    outcome = E.outcome(play(S, state, "-1,0^e+0,0"))
    assert outcome is not None and outcome.reason == "three_towers" and outcome.winners == (0,)


BLOCKED = "-1,0:@wt 0,0:wwB 1,0:bbW 2,0:@bs"


def test_gcs7_a_player_without_moves_passes_and_two_passes_end_the_game() -> None:
    state = position(S, BLOCKED, supply=(0, 0))
    assert legal(S, state) == {"pass"}
    state = play(S, state, "pass")
    assert legal(S, state) == {"pass"} and E.outcome(state) is None
    outcome = E.outcome(play(S, state, "pass"))
    # 0-0 towers, one spellstone each: a draw.
    assert outcome is not None and outcome.reason == "two_passes" and outcome.winners == (0, 1)


def test_gcs7_guard_ending_breaks_a_tower_tie_by_spellstones_in_play() -> None:
    state = position(S, BLOCKED + " 1,-1:bbW", supply=(0, 0))
    outcome = E.outcome(play(S, state, "pass", "pass"))
    assert outcome is not None and outcome.winners == (0,)


def test_gcs7_pass_is_refused_while_a_move_exists() -> None:
    state = position(S, LINE.format(mid="b"))
    with pytest.raises(IllegalActionError, match="legal move"):
        play(S, state, "pass")


# -- quick variant -------------------------------------------------------------


def test_gcq1_no_spellstones_a_minority_completion_is_a_dead_tower() -> None:
    state = position(Q, "-1,0:@ws 0,0:bb 0,-1:@bs 1,-1:bbW")
    east = {m for m in legal(Q, state) if m.startswith("-1,0^e")}
    assert east == {"-1,0^e", "-1,0^e+0,0"}
    after = play(Q, state, "-1,0^e+0,0")
    assert stacks(after)["0,0"] == "bbw" and after.won == {} and after.supply == (14, 15)
    assert EQ.view(after, None)["special"] is None


def test_gcq2_three_full_stacks_end_the_game_and_five_of_nine_stones_win() -> None:
    state = position(Q, "-1,0:@ws 0,0:wb 1,0:bw 1,-1:bbw 2,-1:bbw 0,-1:@bs")
    after = play(Q, state, "-1,0^e+0,0+1,0")
    outcome = EQ.outcome(after)
    # White completed the third stack, but Black holds 5 of its 9 stones.
    assert outcome is not None and outcome.reason == "three_stacks"
    assert outcome.winners == (1,) and outcome.scores == (4.0, 5.0)
    assert stacks(after)["1,0"] == "bw"  # the second drop never happened


def test_gcq2_guard_endings_count_stones_in_full_stacks() -> None:
    state = position(Q, "-1,0:@ws 0,0:www 1,0:@bs", supply=(0, 0))
    outcome = EQ.outcome(play(Q, state, "pass", "pass"))
    assert outcome is not None and outcome.reason == "two_passes"
    assert outcome.winners == (0,) and outcome.scores == (3.0, 0.0)
