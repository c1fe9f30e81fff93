"""Renderers draw each game's board from engine views (snapshot-style text checks)."""

from __future__ import annotations

from typing import Any

from client_cli.render import format_legal, render_game, render_room
from engines import registry


def play(game: str, moves: list[str], seed: int = 1, **options: Any) -> tuple[Any, Any]:
    engine = registry.get_engine(game)
    players = engine.info.min_players
    state = engine.new_game(players, engine.validate_options(players, options), seed)
    for text in moves:
        seat = min(engine.to_act(state))
        state = engine.apply_text(state, seat, text).state
    return engine, state


def board_lines(text: str, first: str, count: int) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    return lines[start:start + count]


GIANTSLAYER_START = """\
       e f g h i
9     d W W W W W        e9..i9
8    c W . . . . W       d8..i8
7   b W . . . . . W      c7..i7
6  a W . . B B . . W     b6..i6
5   W . . B # B . . W    a5..i5
4    W . . B B . . W i   a4..h4
3     W . . . . . W h    a3..g3
2      W . . . . W g     a2..f2
1       W W W W W f      a1..e1
         a b c d e"""


def test_giantslayer_initial_board_is_the_hex_with_giants_round_the_centre() -> None:
    engine, state = play("giantslayer", [])
    text = render_game("giantslayer", engine.view(state, None))
    assert "\n".join(board_lines(text, "       e f", 11)) == GIANTSLAYER_START
    assert "Giantslayer - round 1 of 2" in text
    assert "White (W, halogai): seat 0   Black (B, giants): seat 1" in text
    assert "To move: White" in text


def test_giantslayer_shows_the_last_move_and_the_viewer() -> None:
    engine, state = play("giantslayer", ["a4-c6"])
    text = render_game("giantslayer", engine.view(state, 1), 1)
    assert "Black (B, giants): seat 1 (you)" in text
    assert "Last move: a4-c6" in text
    assert board_lines(text, "6 ", 1) == ["6  a W W . B B . . W     b6..i6"]
    assert board_lines(text, "4 ", 1) == ["4    o . . B B . . W i   a4..h4"]  # a4 just vacated
    assert "To move: Black" in text


TARA_AFTER_FOUR = """\
    A   B   C   D   E   F   G
7       .   .   .   .   .       7

6   .   .   .   .   .   .   .   6

5   .   .   .   W   .   .   .   5
                |
4   .   .   B   W   .   .   .   4

3   .   .   .   .   .   .   .   3

2   .   .   B*  .   .   .   .   2

1       .   .   .   .   .       1
    A   B   C   D   E   F   G"""


def test_tara_draws_the_cross_with_bridges_between_linked_ringforts() -> None:
    engine, state = play("tara", ["D4", "C4", "D5", "C2"])
    view = engine.view(state, 0)
    text = render_game("tara", view, 0)
    white = view["colours"][0].capitalize()
    assert f"seat 0 ({white}, you): bridges 1 (39 left), territory 2" in text
    lines = text.splitlines()
    start = lines.index("    A   B   C   D   E   F   G")
    assert "\n".join(lines[start:start + 15]) == TARA_AFTER_FOUR
    assert "Last move: C2" in text


def test_tara_marks_a_besieged_ringfort_and_horizontal_bridges() -> None:
    # White builds round B7's neighbours (A7 is no hill): C7 and B6 besiege a fort on B7.
    engine, state = play("tara", ["C7", "B7", "B6", "E1"])
    view = engine.view(state, None)
    text = render_game("tara", view, None)
    assert view["must_capture"] == ["B7"]
    assert "must capture one of B7" in text
    assert board_lines(text, "7 ", 1) == ["7       B!  W   .   .   .       7"]
    engine, state = play("tara", ["D4", "A2", "E4", "A5"])
    text = render_game("tara", engine.view(state, None))
    assert board_lines(text, "4 ", 1) == ["4   .   .   .   W - W   .   .   4"]


def test_room_frame_shows_seats_turn_board_recent_and_legal_moves() -> None:
    engine, state = play("giantslayer", [])
    legal = [engine.format_action(state, a) for a in engine.legal_actions(state, 0)]
    room_view = {
        "room": {
            "id": "abc123", "game": "giantslayer", "rules": "standard", "players": 2,
            "status": "playing", "to_act": [0], "deadline": None, "version": 3,
            "seats": [
                {"seat": 0, "name": "ann", "connected": True, "bot": None},
                {"seat": 1, "name": "mcts", "connected": True, "bot": "mcts"},
            ],
        },
        "game": engine.view(state, 0),
        "outcome": None,
    }
    text = render_room(room_view, 0, legal, recent=["seat 1: e6-e7"], legal_limit=5)
    lines = text.splitlines()
    assert lines[0] == "Room abc123 - giantslayer/standard - playing - you are seat 0"
    assert lines[1] == "Seats: seat 0: ann (you); seat 1: mcts (bot mcts)"
    assert lines[2] == "To act: seat 0 (you)"
    assert "\n".join(board_lines(text, "       e f", 11)) == GIANTSLAYER_START
    assert "Recent: seat 1: e6-e7" in text
    assert lines[-1] == f"Legal moves (144): {' '.join(legal[:5])} ... and 139 more"
    spectator = render_room(room_view, None, [])
    assert "you are spectating" in spectator.splitlines()[0]
    assert "Legal moves" not in spectator


def test_finished_room_shows_the_outcome() -> None:
    room_view = {
        "room": {"id": "r", "game": "tara", "rules": "singles", "status": "finished",
                 "seats": [], "to_act": []},
        "game": None,
        "outcome": {"scores": [6, 0], "winners": [0], "reason": "points", "detail": "seat 0 wins 6-0"},
    }
    text = render_room(room_view, 1, [])
    assert "Game over: winner seat 0; scores [6, 0]; points - seat 0 wins 6-0" in text
    assert format_legal([]) == "Legal moves: none (not your turn)"


CAUSEWAY_SPELLSTONE_START = """\
              1   2
r=-3    -1  0   .   .           q=1..2
r=-2  -2  .   .   w   .         q=-1..2
r=-1    .   w   b   .   .       q=-2..2
r=0       .   .   w   b   .     q=-2..2
r=1         .   b   .   .   2   q=-2..1
r=2           .   .   0   1     q=-2..-1
                -2  -1"""


def test_causeway_draws_the_stones_of_the_spellstone_setup() -> None:
    """GC-S1: white blanks on (0,0) (1,-2) (-1,-1), black on (0,-1) (1,0) (-1,1)."""
    engine = registry.get_engine("causeway", "spellstone")
    state = engine.new_game(2, engine.validate_options(2, {}), 1)
    text = render_game("causeway", engine.view(state, 0), 0)
    lines = text.splitlines()
    start = lines.index("r=-3    -1  0   .   .           q=1..2") - 1
    assert "\n".join(lines[start:start + 8]) == CAUSEWAY_SPELLSTONE_START
    assert "White seat 0 (you): towers 0, blanks in supply 17, spellstones in play 0" in text
    assert "White still to place: trapper, spikey" in text


def test_causeway_draws_giants_and_stacks() -> None:
    engine = registry.get_engine("causeway", "barrier")
    state = engine.new_game(2, engine.validate_options(2, {}), 1)
    for text in ("giant@-1,0", "giant@2,0"):
        seat = min(engine.to_act(state))
        state = engine.apply_text(state, seat, text).state
    drawn = render_game("causeway", engine.view(state, None))
    assert board_lines(drawn, "r=0", 1) == ["r=0     .   Gw  w   b   Gb  .     q=-2..3"]


def test_giants_map_offer_and_only_the_viewers_screen() -> None:
    """GI-28/29: a seat sees its own screen and who has bid, never another screen or bid."""
    engine = registry.get_engine("giants")
    state = engine.new_game(3, engine.validate_options(3, {}), 3)
    view = engine.view(state, 0)
    text = render_game("giants", view, 0)
    lines = text.splitlines()
    assert lines[0].startswith("GIANTS - turn 1, phase auction")
    assert board_lines(text, " 4  ", 1) == [" 4  .   V   .   .   .   f3  f6  f2  .   .   .   .   Q"]
    assert board_lines(text, "-1  ", 1) == ["-1                    03  04  05  06"]
    assert "Your screen: 1 workers, chief yes, sorcerer yes, 2 markers" in text
    assert text.count("thinking") == 3
    # Seat 0 bids; seat 1's screen shows that seat 0 has bid, but not what.
    bid = engine.format_action(state, engine.legal_actions(state, 0)[-1])
    state = engine.apply_text(state, 0, bid).state
    other = render_game("giants", engine.view(state, 1), 1)
    assert "has bid" in board_lines(other, "   0  ", 1)[0]
    assert "Your sealed bid" not in other
    mine = render_game("giants", engine.view(state, 0), 0)
    assert "Your sealed bid: " in mine
    spectator = render_game("giants", engine.view(state, None), None)
    assert "Your screen" not in spectator


def test_room_frame_counts_down_a_move_deadline() -> None:
    room_view = {
        "room": {"id": "r", "game": "tara", "rules": "singles", "status": "playing",
                 "seats": [], "to_act": [1], "deadline": 1000.0},
        "game": None,
        "outcome": None,
    }
    assert "To act: seat 1 (you) - 25 s left to move" in render_room(room_view, 1, now=975.2)
    assert "To act: seat 1 (you)\n" in render_room(room_view, 1) + "\n"


def test_a_finished_tara_match_says_match_over_not_out() -> None:
    from engines import get_engine
    from engines.playout import random_playout

    engine = get_engine("tara")
    for seed in range(6):
        final = random_playout(engine, 2, seed, {"games": 1}).final_state
        view = engine.view(final, 0)
        text = render_game("tara", view, 0)
        assert "Match over" in text
        assert "called OUT" not in text
        last = view["results"][-1]
        assert f"seat 0 (you): bridges {last['bridges'][0]} " in text
        assert f"seat 1: bridges {last['bridges'][1]} " in text


def test_giants_map_marks_depend_only_on_what_is_on_the_hex() -> None:
    """A hex whose pieces did not change looks the same on the next screen (marks are
    not handed out in order, which shifted them as pieces came and went)."""
    import random

    from client_cli.render.giants import _draw_map
    from engines import get_engine
    from engines.giants.board import ISLAND

    engine = get_engine("giants")
    state = engine.new_game(3, {}, 7)
    rng = random.Random(7)
    cols = sorted({c for c, _ in [*ISLAND.land_order, *(a.hex for a in ISLAND.ahu)]})
    rows = sorted({r for _, r in [*ISLAND.land_order, *(a.hex for a in ISLAND.ahu)]})

    def marks(view: dict) -> dict[str, str]:
        lines, _legend = _draw_map(view)
        out = {}
        for c, r in ISLAND.land_order:
            line = lines[1 + rows.index(r)]
            x = 4 + (c - cols[0]) * 4 + (2 if r % 2 else 0)
            out[f"{c},{r}"] = line[x:x + 3].strip()
        return out

    from engines.bots.base import StepTracker

    tracker = StepTracker()
    before = engine.view(state, None)
    changed_marks = 0
    for _ in range(300):
        to_act = engine.to_act(state)
        seat = tracker.next_seat(to_act)
        state = engine.apply(state, seat, rng.choice(engine.legal_actions(state, seat))).state
        tracker.acted(seat, to_act, engine.to_act(state))
        after = engine.view(state, None)
        old, new = marks(before), marks(after)
        for key in old:
            same = before["board"].get(key) == after["board"].get(key) and before["forests"].get(key) == after["forests"].get(key)
            same = same and [s for s, st in before["statues"].items() if st.get("hex") == key and st.get("front") is None] == \
                [s for s, st in after["statues"].items() if st.get("hex") == key and st.get("front") is None]
            if same:
                assert old[key] == new[key], (key, old[key], new[key])
            elif old[key] != new[key]:
                changed_marks += 1
        before = after
    assert changed_marks > 0  # pieces did move during the game


def test_room_frame_shows_draw_offers_answers_and_early_endings() -> None:
    from client_cli.render import render_room

    room = {"id": "r", "game": "tara", "rules": "singles", "status": "playing",
            "seats": [{"seat": 0, "name": "a"}, {"seat": 1, "name": "b"}],
            "to_act": [0], "answered": [], "deadline": None, "draw_offer": 1}
    text = render_room({"room": room, "game": None, "outcome": None}, 0)
    assert "Seat 1 offers a draw: /draw accepts, /decline declines" in text
    text = render_room({"room": {**room, "draw_offer": 0}, "game": None, "outcome": None}, 0)
    assert "You offered a draw" in text
    giants = {**room, "to_act": [0, 1, 2], "answered": [1], "draw_offer": None}
    assert "To act: seat 0 (you), seat 1, seat 2; answered: seat 1" in render_room(
        {"room": giants, "game": None, "outcome": None}, 0)
    done = {**room, "status": "finished", "draw_offer": None}
    resigned = {"scores": [1.0, 0.0], "winners": [0], "reason": "resigned", "detail": "seat 1 resigned", "seat": 1}
    assert "winner seat 0; scores [1.0, 0.0]; resigned - seat 1 resigned" in render_room(
        {"room": done, "game": None, "outcome": resigned}, 0)
    aborted = {"scores": [0.0, 0.0], "winners": [], "reason": "aborted", "detail": "seat 0 aborted the game"}
    assert "Game aborted: no result - seat 0 aborted the game" in render_room(
        {"room": done, "game": None, "outcome": aborted}, 1)


def test_network_text_is_printed_without_control_characters() -> None:
    """A name or message from another player cannot move the cursor, recolour the
    terminal or reverse the text around it (ANSI escapes, bidi overrides)."""
    from client_cli.render.safe import printable
    from client_cli.tui.session import Reply

    hostile = "eve\x1b[2J\x1b[31m\u202egnp.exe\u200b\r"
    shown = printable(hostile)
    assert shown == "eve\\u001b[2J\\u001b[31m\\u202egnp.exe\\u200b\\u000d"
    assert shown.isprintable()
    assert printable("line one\nline two: (5,3) ✓") == "line one\nline two: (5,3) ✓"
    assert Reply(f"error [no_such_room]: {hostile}").text.replace("\n", "").isprintable()


def test_giants_shows_a_seat_its_own_moai_points_and_nobody_elses() -> None:
    """GI-27/28: Moai points (erected Moai, owners hidden) are shown to their owner
    only, even to a seat that looked under another's Moai; after the end (GI-30) all."""
    from engines.giants.scoring import scores
    from engines.giants.state import OVER, AhuState

    engine = registry.get_engine("giants")
    state = engine.new_game(3, engine.validate_options(3, {}), 3).clone()  # a new game's Ahu are read only
    state.ahu["A01"] = AhuState(owner=0, size=2, headdress=True)
    state.ahu["A05"] = AhuState(owner=0, size=1)
    state.ahu["A10"] = AhuState(owner=1, size=3)
    state.seats[0].points, state.seats[1].points = 4, 7
    state.seats[0].looked = ["A10"]  # seat 0 paid to see who owns A10's Moai
    total = scores(state)
    mine, theirs = total[0] - 4, total[1] - 7
    assert mine > 0 and theirs > 0
    text = render_game("giants", engine.view(state, 0), 0)
    assert board_lines(text, "seat  transport  Moai", 1)
    assert board_lines(text, "   0  ", 1)[0].startswith(f"   0          4  {mine:>6}  ")
    assert board_lines(text, "   1  ", 1)[0].startswith("   1          7  hidden  ")
    assert board_lines(text, "   2  ", 1)[0].startswith("   2          0  hidden  ")
    assert f"Your score now: 4 transport + {mine} Moai = {4 + mine} " in text
    other = render_game("giants", engine.view(state, 1), 1)
    assert board_lines(other, "   1  ", 1)[0].startswith(f"   1          7  {theirs:>6}  ")
    assert board_lines(other, "   0  ", 1)[0].startswith("   0          4  hidden  ")
    assert f"Your score now: 7 transport + {theirs} Moai = {7 + theirs} " in other
    spectator = render_game("giants", engine.view(state, None), None)
    assert spectator.count("hidden  ") == 3 and "Your score now" not in spectator
    state = state.clone()  # a state is a value: once viewed, change a copy (its view parts are kept)
    state.phase = OVER
    final = render_game("giants", engine.view(state, None), None)
    assert board_lines(final, "   0  ", 1)[0].startswith(f"   0          4  {mine:>6}  ")
    assert board_lines(final, "   1  ", 1)[0].startswith(f"   1          7  {theirs:>6}  ")
