"""Giant's Causeway's fast paths agree with the plain rules they stand for.

The legal list and `apply` use shortcuts (the GC-3 split found by two searches taking
turns, ...): over random games with fixed seeds in every rule set, each gives what the
rule worked out the plain way gives.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Iterator

import pytest
from causeway_position import position, positions, random_causeways

from engines import hexgrid
from engines.base import NotationError
from engines.causeway import CausewayState
from engines.causeway.board import (
    ARC_STARTS,
    DIRECTION_NAMES,
    MASK_BITS,
    SLIDES,
    SLIDES_SORTED,
    TRAP_GATES,
    carry_frontier,
    cell_name,
    frontier,
    frontier_of,
    parse_cell,
    position_key,
    ring_mask,
    stone_count,
)
from engines.causeway.connected import split_without
from engines.causeway.engine import CausewayEngine
from engines.causeway.notation import PASS, Action, Destroy, Drop, Leap, Place, Step
from engines.causeway.views import digest
from engines.registry import get_engine

RULES = ["barrier", "spellstone", "quick"]


def crowded_causeways(rules: str, count: int, seed: int) -> Iterator[CausewayState]:
    """`random_causeways` with the rule set's giants (two a side) and stacks of every
    height and colour, towers topped by barriers / spellstones among them (0-5 a side
    out: below, at and above GC-B7's / GC-S6's limit), either side to move, either
    supply low."""
    rng = random.Random(seed)
    kinds = ("giant", "giant") if rules == "barrier" else ("trapper", "spikey")
    for state in random_causeways(count, seed):
        cells = sorted(set(state.stacks) | set(state.giants))
        pieces = [(0, kinds[0]), (0, kinds[1]), (1, kinds[0]), (1, kinds[1])]
        giants = dict(zip(rng.sample(cells, min(len(cells), 4)), pieces, strict=False))  # shapes of 4+ cells
        stacks: dict[tuple[int, int], str] = {}
        for c in cells:
            if c not in giants:
                height = rng.choice((1, 2, 2, 2, 3))
                stones = "".join(rng.choice("wb") for _ in range(min(height, 2)))
                stacks[c] = stones + rng.choice("wbWBWB") if height == 3 else stones
        won = {c: rng.randrange(2) for c, s in stacks.items() if len(s) == 3 and s[-1] in "wb"}
        supply = (rng.choice((0, 1, 2, 9)), rng.choice((0, 1, 2, 9)))
        yield CausewayState(stacks, giants, supply, ((), ()), won, {}, rng.randrange(2), "play", 20)


@pytest.mark.parametrize("rules", RULES)
def test_the_leaps_written_with_and_without_choices_are_the_listed_actions_written(rules: str) -> None:
    """GC-B6 / B7, GC-S5 / S6, GC-Q1: a leap's drop sets are written straight from the
    stacks passed over unless a drop completes a tower on two opponent stones while the
    mover has the limit of barriers / spellstones out (then `_choice_sets` names the
    choices): over crowded random positions, the list in notation is `legal_actions`
    formatted, in order, with leaps asking for choices and leaps over such towers that
    ask none both among them."""
    engine = get_engine("causeway", rules)
    leaps = chosen = 0
    for state in crowded_causeways(rules, 400, 11):
        expected = [engine.format_action(state, a) for a in engine.legal_actions(state, state.to_move)]
        assert engine.legal_notation(state, state.to_move) == expected
        leaps += sum("^" in text for text in expected)
        chosen += sum("/" in text for text in expected)
    assert leaps > 300 and (chosen > 10 or rules == "quick"), (leaps, chosen)


@pytest.mark.parametrize("rules", RULES)
def test_the_legal_list_in_notation_is_the_listed_actions_written(rules: str) -> None:
    """The list a room sends (`legal_notation`, written directly) is `legal_actions`
    (the rules as action objects: GC-B2..B6 / GC-S1..S5) formatted, in order."""
    engine = get_engine("causeway", rules)
    checked = 0
    for state in positions(engine, range(10, 16)):
        for seat in (0, 1):
            expected = [engine.format_action(state, a) for a in engine.legal_actions(state, seat)]
            assert engine.legal_notation(state, seat) == expected
            checked += bool(expected)
    assert checked


@pytest.mark.parametrize("rules", RULES)
def test_the_frontier_carried_from_move_to_move_is_the_one_worked_out_afresh(rules: str) -> None:
    """GC-B4's step targets (every empty cell beside the Causeway) come from the last
    position's frontier changed around the cells a move filled or emptied (steps,
    leaps, placements, GC-B2..B6 / GC-S1..S5): after every move of random games it is
    the sorted frontier of the new position, with its cells' names."""
    engine = get_engine("causeway", rules)
    carried = 0
    for seed in range(20, 26):
        rng = random.Random(seed)
        state = engine.new_game(2, {}, seed)
        frontier_of(state)
        while engine.outcome(state) is None:
            seat = state.to_move
            action = engine.parse_action(state, seat, rng.choice(engine.legal_notation(state, seat)))
            state = engine.apply(state, seat, action).state
            kept = state.memo.get("frontier")
            assert kept is not None
            cells = sorted(frontier(state.stacks, state.giants))
            assert kept == (cells, [cell_name(c) for c in cells]), engine.format_action(state, action)
            carried += 1
    assert carried


@pytest.mark.parametrize("rules", ["spellstone", "quick"])
def test_step_targets_are_the_slide_rule_and_trap_steps_worked_out_plainly(rules: str) -> None:
    """GC-S2: an adjacent empty cell unless both cells beside both are occupied; GC-S3:
    a trapper may also go to any empty cell whose only occupied neighbour is one
    opponent giant. Over random games, every untrapped giant's targets are those."""
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    traps = 0
    for state in positions(engine, range(30, 40)):
        occupied = set(state.stacks) | set(state.giants)
        for cell, (colour, kind) in state.giants.items():
            expected = set()
            for b in hexgrid.neighbors(cell):
                both = set(hexgrid.neighbors(cell)) & set(hexgrid.neighbors(b))
                if b not in occupied and not both <= occupied:
                    expected.add(b)
            if kind == "trapper":
                for other, (owner, _) in state.giants.items():
                    for n in hexgrid.neighbors(other):
                        touching = [m for m in hexgrid.neighbors(n) if m in occupied]
                        if owner != colour and n not in occupied and touching == [other]:
                            expected.add(n)
                            traps += 1
            assert engine.step_targets(state, cell, False) == sorted(expected), cell
    assert traps



def assert_plain_stacks_part(engine: CausewayEngine, state: CausewayState) -> None:
    """The state's "stacks" entry and current repetition key are what the plain rule gives."""
    stacks, view, counted, cells = state.memo["stacks"]
    assert stacks is state.stacks
    assert cells == sorted(state.stacks)
    assert list(view.items()) == [(cell_name(c), s) for c, s in sorted(state.stacks.items())]
    tops = [s[-1] for s in state.stacks.values()]
    assert counted == {"white": tops.count("W"), "black": tops.count("B")}
    assert engine.view(state, None)["stacks"] is view
    keyed = 1 - state.to_move if state.phase == "destroy" else state.to_move
    assert digest(state) == position_key(state.stacks, state.giants, state.supply, keyed)


@pytest.mark.parametrize("rules", RULES)
def test_the_stacks_view_and_the_repetition_key_carried_from_move_to_move_are_the_plain_ones(rules: str) -> None:
    """A move changes the last position's sorted, named stacks only where it laid or
    dropped a stone (steps GC-B4 / GC-S2, drops GC-B6 / GC-S5, completions GC-B7 /
    GC-S6 / GC-Q1, placements GC-B2 / GC-S1), and the repetition key (GC-B11 / GC-S7:
    cells + supplies + side to move) is read from that: in random games, after every
    legal move of every tenth position, both are what the plain rule gives."""
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    moves = specials = 0
    for state in positions(engine, range(40, 46)):
        assert_plain_stacks_part(engine, state)
        specials += sum(state.memo["stacks"][2].values()) > 0
        if state.ply % 10 == 0:
            for text in engine.legal_notation(state, state.to_move):
                assert_plain_stacks_part(engine, engine.apply_text(state, state.to_move, text).state)
                moves += 1
    assert moves and (specials or rules == "quick")


@pytest.mark.parametrize(("rules", "picture"), [
    ("barrier", "-1,0:@w 0,0:bb 1,0:bb 0,-1:@b 1,-1:bbW 2,-1:bbW 2,-2:bbW"),
    ("spellstone", "-1,0:@wt 0,0:bb 1,0:bb 0,-1:@bs 1,-1:bbW 2,-1:bbW 2,-2:bbW -2,0:@ws 1,1:@bt"),
])
def test_the_stacks_view_after_a_fourth_special_moves_or_turns_one_is_the_plain_one(rules: str, picture: str) -> None:
    """GC-B7 / GC-S6: a drop completing a tower on two opponent stones when three
    barriers / spellstones are out changes a fourth cell, the one chosen: after every
    legal move, the carried stacks view and key are the plain ones."""
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    state = position(rules, picture)
    engine.view(state, None)  # the entry the next moves change
    chosen = 0
    for text in engine.legal_notation(state, 0):
        assert_plain_stacks_part(engine, engine.apply_text(state, 0, text).state)
        chosen += "/" in text
    assert chosen >= 3


def leap_targets(engine: CausewayEngine, state: CausewayState) -> Iterator[tuple[int, tuple[tuple[int, int], ...]]]:
    """(colour, drop targets) of every leap either side could list, drops' choices aside."""
    for colour in (0, 1):
        for origin, (owner, _) in state.giants.items():
            if owner != colour:
                continue
            split = split_without(state.stacks | state.giants, origin)
            for direction in range(6):
                for leap in engine._leaps(state, origin, colour, direction, split):
                    yield colour, tuple(d.cell for d in leap.drops)


def test_the_frontier_carried_over_any_cells_filled_and_emptied_is_the_one_worked_out_afresh() -> None:
    """GC-B4's frontier (every empty cell beside the Causeway), carried over one, two
    or three cells filled (a step's, a placement's or a leap's target: on the frontier
    or anywhere) and none or one emptied (a leap's origin), on random shapes (holes,
    edges, cells at the ends of the sorted list), is the sorted frontier worked out
    afresh, with its cells' names."""
    rng = random.Random(3)
    carried = 0
    for before in random_causeways(400, 5):
        kept = frontier_of(before)
        occupied = sorted(set(before.stacks) | set(before.giants))
        emptied = tuple(rng.sample(occupied, rng.choice((0, 0, 1))))
        free = [c for c in kept[0] if c not in emptied] + [(rng.randrange(-6, 7), rng.randrange(-6, 7))]
        filled = tuple(c for c in set(rng.sample(free, min(len(free), rng.choice((1, 1, 2, 3))))) if c not in occupied)
        stacks = {c: s for c, s in before.stacks.items() if c not in emptied}
        stacks.update((c, "w") for c in filled)
        giants = {c: g for c, g in before.giants.items() if c not in emptied}
        after = CausewayState(stacks, giants, (15, 15), ((), ()), {}, {}, 1, "play", 21)
        carry_frontier(before, after, filled, emptied)
        cells = sorted(frontier(stacks, giants))
        assert after.memo["frontier"] == (cells, [cell_name(c) for c in cells]), (filled, emptied)
        assert frontier_of(before) is kept  # the last position's lists are left as they were
        carried += 1
    assert carried == 400


@pytest.mark.parametrize(("rules", "picture"), [
    ("barrier", "-1,0:@w 0,0:bb 1,0:bb 0,-1:@b 1,-1:bbW 2,-1:bbW 2,-2:bbW"),
    ("barrier", "-1,0:@w 0,0:bb 1,0:bb 0,-1:@b 1,-1:bbW 2,-1:bbW 2,-2:w"),
    ("barrier", "-1,0:@w 0,0:bb 1,0:bb 0,-1:@b 1,-1:bbW 2,-1:b 2,-2:bbW"),
    ("spellstone", "-1,0:@wt 0,0:bb 1,0:bb 0,-1:@bs 1,-1:bbW 2,-1:bbW 2,-2:bbW -2,0:@ws 1,1:@bt"),
    ("spellstone", "-1,0:@wt 0,0:bb 1,0:bb 0,-1:@bs 1,-1:bbW 2,-1:bb 2,-2:bbW -2,0:@ws 1,1:@bt"),
])
def test_choices_are_asked_for_exactly_when_the_drops_resolved_in_order_ask(rules: str, picture: str) -> None:
    """GC-B7 / GC-S6: a drop completing a tower on two opponent stones asks which
    barrier moves / spellstone turns only when the mover already has three out.
    `_choice_sets` answers "none" from the count alone when that can never happen; for
    every leap of crowded positions and of random games, it is what resolving the drops
    one by one on copies (`_choice_walk`) gives."""
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    crowded = position(rules, picture)
    engine.view(crowded, None)  # the count kept with the state
    states = [crowded, *(s for s in positions(engine, range(50, 56)) if s.phase == "play")]
    asked = checked = 0
    for state in states:
        for colour, targets in leap_targets(engine, state):
            expected = engine._choice_walk(state, colour, targets)
            assert engine._choice_sets(state, colour, targets) == expected, (colour, targets)
            asked += expected != [(None,) * len(targets)]
            checked += 1
    assert asked and checked > 100


@pytest.mark.parametrize("rules", RULES)
def test_the_repetition_history_and_its_end_are_the_plain_ones(rules: str) -> None:
    """GC-B11 / GC-S7: a position repeated a third time (cells + supplies + side to move)
    ends the game; a move that adds a stone (or a setup placement) starts the history
    afresh. The state keeps only the earlier digests and works out the current one when
    asked (`views.digest`): in random games, every snapshot's history is the plain list
    of every digest since the last stone was added, the current one last, and the game
    ends by repetition exactly when that one is there a third time."""
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    longest = repeated = carried = 0
    for seed in range(20):
        rng = random.Random(seed)
        state = engine.new_game(2, {}, seed)
        plain = [position_key(state.stacks, state.giants, state.supply, state.to_move)]
        while True:
            assert engine.snapshot(state)["history"] == plain
            if engine.outcome(state) is not None:
                break
            seat = state.to_move
            text = rng.choice(engine.legal_notation(state, seat))
            after = engine.apply(state, seat, engine.parse_action(state, seat, text)).state
            # the stacks are passed on exactly when the move left them equal (a step lays a
            # blank, every drop adds a stone or tops a tower: GC-B4..B7, GC-S2..S6, GC-Q1)
            assert (after.stacks is state.stacks) == (after.stacks == state.stacks)
            kept = after.memo.get("text")  # the key's stacks text, carried with their view
            if kept is not None:
                assert kept[0] is after.memo["stacks"][1]
                assert kept[1] == ";".join(cell_name(c) + s for c, s in sorted(after.stacks.items()))
                carried += kept is state.memo.get("text")
            keyed = 1 - after.to_move if after.phase == "destroy" else after.to_move
            key = position_key(after.stacks, after.giants, after.supply, keyed)
            if state.phase == "setup" or stone_count(after.stacks) != stone_count(state.stacks):
                plain = [key]
            else:
                plain.append(key)
            third = plain.count(key) >= 3
            if state.phase == "play" and after.phase != "destroy" and after.end in (None, "repetition"):
                assert (after.end == "repetition") == third, (seed, text)
            longest, repeated = max(longest, len(plain)), repeated + third
            state = after
    assert longest >= 2, longest  # moves that add no stone were played (GC-B11's cycle: test_causeway_barrier)
    assert carried or rules == "barrier"  # (GC-S5's drop-less leaps; barrier's leaps drop)


@pytest.mark.parametrize("rules", RULES)
def test_trapped_giants_are_the_plain_ones(rules: str) -> None:
    """GC-B3 / GC-S3: a giant is trapped when an opponent giant that traps (any giant in
    barrier, the trapper in spellstone and quick) is beside it and touches nothing else;
    `is_trapped` (one walk of each ring) says so for every giant of random games."""
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    trapped = 0
    for state in positions(engine, range(30)):
        occupied = set(state.stacks) | set(state.giants)
        for cell, (colour, _) in state.giants.items():
            plain = any(
                n in state.giants
                and state.giants[n][0] != colour
                and engine.traps(state.giants[n][1])
                and [m for m in hexgrid.neighbors(n) if m in occupied] == [cell]
                for n in hexgrid.neighbors(cell)
            )
            assert engine.is_trapped(state, cell, colour) == plain, (cell, state.stacks, state.giants)
            trapped += plain
    assert trapped


@pytest.mark.parametrize("rules", RULES)
def test_the_drop_table_is_the_plain_drop_rule(rules: str) -> None:
    """GC-B6 (1 or 2 drops; none only over no open stack) and GC-S5 (0-2): the table the
    legal list reads gives `drop_sizes` for any count of open stacks and any supply."""
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    for droppable in range(8):
        for supply in range(22):
            got = engine.drop_table[min(supply, 2)][min(droppable, 2)]
            assert got == tuple(engine.drop_sizes(droppable, supply)), (droppable, supply)


def test_the_ring_tables_are_the_plain_rules() -> None:
    """GC-3 (arcs of occupied cells around a giant), GC-S2 (the slide rule's gates, also
    in the order of their cells), GC-S3 (trap steps need the cell and both cells beside
    it on the ring empty) and GC-B5 / GC-S4 (a leap's run starts on an occupied
    neighbour), read by ring mask (bit i: the ring's i-th cell, in GC-1's direction
    order, occupied)."""
    for mask in range(64):
        full = [bool(mask >> i & 1) for i in range(6)]
        assert ARC_STARTS[mask] == tuple(i for i in range(6) if full[i] and not full[(i + 5) % 6])
        assert SLIDES[mask] == tuple(
            i for i in range(6) if not full[i] and not (full[(i + 5) % 6] and full[(i + 1) % 6])
        )
        assert TRAP_GATES[mask] == tuple(
            i for i in range(6) if not full[i] and not full[(i + 5) % 6] and not full[(i + 1) % 6]
        )
        assert MASK_BITS[mask] == tuple(i for i in range(6) if full[i])
        for cell in ((0, 0), (3, -7), (-12, 5)):  # GC-S2's steps are listed in cell order
            ring = hexgrid.neighbors(cell)
            assert [ring[i] for i in SLIDES_SORTED[mask]] == sorted(ring[i] for i in SLIDES[mask])
    stacks = {(0, 0): "w", (1, -1): "b"}
    giants = {(-1, 0): (0, "giant")}
    ring = tuple(hexgrid.neighbors((0, -1)))
    assert ring_mask(ring, stacks, giants) == sum(
        1 << i for i, c in enumerate(ring) if c in stacks or c in giants
    )


def plain_action(text: str) -> Action:
    """The notation read the plain way (docs/rules/causeway.md): spaces dropped, any
    case, cells by `parse_cell`, actions by their constructors."""
    raw = "".join(text.split()).lower()
    if raw == "pass":
        return PASS
    if "@" in raw:
        word, _, where = raw.partition("@")
        cell = parse_cell(where)
        assert cell is not None
        return Destroy(cell) if word == "destroy" else Place(word, cell)
    if "^" in raw:
        head, _, rest = raw.partition("^")
        direction, *drop_texts = rest.split("+")
        drops = []
        for part in drop_texts:
            target, slash, choice = part.partition("/")
            cell = parse_cell(target)
            assert cell is not None
            drops.append(Drop(cell, parse_cell(choice) if slash else None))
        start = parse_cell(head)
        assert start is not None
        return Leap(start, DIRECTION_NAMES.index(direction), tuple(drops))
    head, _, tail = raw.partition(">")
    start, to = parse_cell(head), parse_cell(tail)
    assert start is not None and to is not None
    return Step(start, to)


def respelt(text: str) -> str:
    """The same action written with spaces, upper case and leading zeros (cells no name has)."""
    signed = re.sub(r",(\d)", r" , 0\1", text)  # "01" parses, but no name says it
    return " " + signed.upper().replace(">", " > ").replace("^", " ^ ") + " "


@pytest.mark.parametrize("rules", RULES)
def test_actions_read_from_the_names_table_are_the_plain_ones(rules: str) -> None:
    """A move's cells are read by one lookup of the names the legal list made, and its
    step, leap and drops built by their slots' setters: for every legal move of random
    games (GC-B2..B10, GC-S1..S6), and the same moves respelt, `parse_action` gives
    the action read the plain way, equal, hashed alike and frozen."""
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    read = 0
    for state in positions(engine, range(60, 66)):
        for text in engine.legal_notation(state, state.to_move):
            for written in (text, respelt(text)):
                action = engine.parse_action(state, state.to_move, written)
                plain = plain_action(written)
                assert action == plain and hash(action) == hash(plain) and type(action) is type(plain), written
                assert engine.format_action(state, action) == text
                read += 1
            for field in dataclasses.fields(action):
                with pytest.raises(dataclasses.FrozenInstanceError):
                    setattr(action, field.name, None)
    assert read > 1000
    with pytest.raises(NotationError):
        engine.parse_action(state, 0, "0,0^up")
    with pytest.raises(NotationError):
        engine.parse_action(state, 0, "0,0>0;1")


def near_misses(state: CausewayState, legal: list[Action]) -> Iterator[Action]:
    """Moves a client might send that are not all listed: steps to every cell two steps
    or less from a giant, each listed leap respelt (drops reversed or cut, another
    direction, direction -1 for 5, a choice on every drop, drops as a list), and each
    listed move with cells that are equal but not ints."""
    for cell in state.giants:
        for n in hexgrid.neighbors(cell):
            for to in (n, *hexgrid.neighbors(n)):
                yield Step(cell, to)
    for action in legal:
        if isinstance(action, Leap):
            start, direction, drops = action.start, action.direction, action.drops
            yield Leap(start, direction, drops[::-1])
            yield Leap(start, direction, drops[:-1])
            yield Leap(start, (direction + 1) % 6, drops)
            yield Leap(start, direction - 6, drops)
            yield Leap(start, direction, tuple(Drop(d.cell, d.cell) for d in drops))
            yield Leap(start, direction, list(drops))  # type: ignore[arg-type]
            yield Leap((float(start[0]), start[1]), direction, drops)  # type: ignore[arg-type]
        elif isinstance(action, Step):
            yield Step(action.start, (float(action.to[0]), action.to[1]))  # type: ignore[arg-type]


@pytest.mark.parametrize("rules", RULES)
def test_moves_found_in_the_kept_legal_list_are_judged_as_the_plain_checks_judge(rules: str) -> None:
    """Once a position's legal list was asked for, `apply` finds a step or leap in it
    (kept joined, however long: barrier's lists of ~60 too) before checking it the plain
    way (GC-B3..B7, GC-S2..S6: the giant's own, its trap, its targets, its run, the GC-3
    split, its drops and choices): over random games, every listed move and near miss
    is judged (accepted, or refused with the same reason) as on the same position never
    listed, and plays out alike."""
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    kept = judged = refused = plays = longest = 0
    for state in positions(engine, range(70, 76)):
        if state.phase != "play":
            continue
        plays += 1
        seat = state.to_move
        texts = engine.legal_notation(state, seat)
        kept += "legal" in state.memo
        longest = max(longest, len(texts))
        plain = dataclasses.replace(state)  # the same position, nothing kept
        legal = [engine.parse_action(state, seat, text) for text in texts]
        for action in [*legal, *near_misses(state, legal)]:
            problem = engine._illegal(state, seat, action)
            assert problem == engine._illegal(plain, seat, action), action
            judged += 1
            refused += problem is not None
        for action in legal[:3]:
            listed, unlisted = engine.apply(state, seat, action), engine.apply(plain, seat, action)
            assert listed.events == unlisted.events
            assert engine.snapshot(listed.state) == engine.snapshot(unlisted.state)
    assert kept == plays and judged > 1000 and refused > 500
    assert longest > 40 if rules == "barrier" else longest > 10


@pytest.mark.parametrize("rules", RULES)
def test_the_seats_to_act_are_the_side_to_move(rules: str) -> None:
    """GC-4 (turns alternate, White first), GC-B10 (the destroy step's player moves
    again): `to_act` answers from two sets made once, the side to move's, and nobody
    once the game is over."""
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    for state in positions(engine, range(80, 84)):
        over = engine.outcome(state) is not None
        assert engine.to_act(state) == (frozenset() if over else frozenset({state.to_move}))
        assert engine.waiting_for(state) == engine.to_act(state)


@pytest.mark.parametrize("rules", RULES)
def test_a_step_shares_the_towers_maps_and_no_move_changes_the_position_it_left(rules: str) -> None:
    """A step lays a blank and moves its giant (GC-B4 / GC-S2): it is played on the
    state's very maps of towers won and destroyed (GC-B7 / B10, GC-S6), which the next
    state then holds; drops (GC-B6 / GC-S5) and destroy steps (GC-B10) write copies. Over
    random games no move changes the position it was played from (its snapshot)."""
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    steps = others = 0
    for seed in range(30, 36):
        rng = random.Random(seed)
        state = engine.new_game(2, {}, seed)
        while engine.outcome(state) is None:
            seat = state.to_move
            before = engine.snapshot(state)
            action = engine.parse_action(state, seat, rng.choice(engine.legal_notation(state, seat)))
            after = engine.apply(state, seat, action).state
            assert engine.snapshot(state) == before
            if isinstance(action, Step):
                assert after.won is state.won and after.destroyed is state.destroyed
                steps += 1
            else:
                others += after.won != state.won or after.destroyed != state.destroyed
            state = after
    assert steps > 50 and (others or rules == "quick")
