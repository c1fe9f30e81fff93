"""Every board the terminal client draws names its cells the way moves are typed: a
cell's name is read off the screen from its row label and its column label, for every
cell of Giantslayer (GS-14), Giant's Causeway in all three rule sets (GC-1 `q,r`), Tara
(TA-11) and the GIANTS island (`(column,row)`)."""

from __future__ import annotations

import copy
import random
import re
from typing import Any

import pytest

from client_cli.render import render_game
from engines import registry
from engines.giants.board import ISLAND


def locate(text: str, mark: str, board: str = r"-?\d") -> tuple[list[str], int, int]:
    """The lines of `text` and the (line, column) of the one place `mark` is drawn on
    the board (the lines that start with a row label matching `board`)."""
    lines = text.splitlines()
    found = [(i, m.start()) for i, line in enumerate(lines) if re.match(rf"\s*{board}", line)
             for m in re.finditer(re.escape(mark), line)]
    assert len(found) == 1, f"{mark!r} drawn {len(found)} times"
    return lines, found[0][0], found[0][1]


def walk(lines: list[str], row: int, x: int, step_row: int, step_x: int, pattern: str) -> str:
    """Follow a column's slant from (row, x) until a token matching `pattern` starts."""
    while True:
        row, x = row + step_row, x + step_x
        assert 0 <= row < len(lines) and x >= 0, "walked off the screen without meeting a label"
        token = lines[row][x:].split(" ", 1)[0] if x < len(lines[row]) else ""
        if re.fullmatch(pattern, token):
            return token


def test_every_giantslayer_cell_is_read_off_its_rank_and_column_letters() -> None:
    engine = registry.get_engine("giantslayer")
    view = engine.view(engine.new_game(2, engine.validate_options(2, {}), 1), None)
    for name in view["cells"]:
        if name == "e5":  # the impassable centre, drawn `#`
            continue
        lone = dict(view, board=["W" if cell == name else "." for cell in view["cells"]], last_move=None)
        lines, row, x = locate(render_game("giantslayer", lone), "W ")
        rank = lines[row].split()[0]
        up = walk(lines, row, x, -1, -1, "[a-i]")
        down = walk(lines, row, x, 1, 1, "[a-i]")
        assert (up, down, rank) == (name[0], name[0], name[1:]), name


@pytest.mark.parametrize("rules", ["barrier", "spellstone", "quick"])
def test_every_causeway_stack_is_read_off_its_r_row_and_q_column(rules: str) -> None:
    engine = registry.get_engine("causeway", rules)
    rng = random.Random(7)
    checked = 0
    for seed in range(1, 4):
        state = engine.new_game(2, engine.validate_options(2, {}), seed)
        for _ in range(rng.randrange(5, 40)):  # a board grown into an irregular shape
            seats = sorted(engine.to_act(state))
            if not seats:
                break
            state = engine.apply_text(state, seats[0], rng.choice(engine.legal_notation(state, seats[0]))).state
        view = engine.view(state, None)
        for cell in view["stacks"]:
            if cell in view["giants"]:
                continue  # drawn as the giant
            marked = copy.deepcopy(view)
            marked["stacks"][cell] = "X"
            lines, row, x = locate(render_game("causeway", marked), "X", r"r=")
            r = re.match(r"r=(-?\d+)", lines[row])
            assert r is not None
            up = walk(lines, row, x, -1, -2, r"-?\d+")
            down = walk(lines, row, x, 1, 2, r"-?\d+")
            assert (up, down, r.group(1)) == (*cell.split(",")[:1] * 2, cell.split(",")[1]), cell
            checked += 1
    assert checked > 20


def test_every_tara_hill_is_read_off_its_column_letter_and_row_number() -> None:
    engine = registry.get_engine("tara")
    view = engine.view(engine.new_game(2, engine.validate_options(2, {}), 1), None)
    for name in view["hills"]:
        lone = dict(view, hills={h: "W" if h == name else "." for h in view["hills"]}, last_move=None)
        lines, row, x = locate(render_game("tara", lone), "W ")
        rulers = [line for line in lines if line.split() == list("ABCDEFG")]
        assert len(rulers) == 2  # above and below the grid
        numbers = lines[row].split()
        assert {ruler[x] for ruler in rulers} == {name[0]}, name
        assert numbers[0] == numbers[-1] == name[1:], name


def test_every_giants_hex_is_read_off_its_column_ruler_and_row_number() -> None:
    engine = registry.get_engine("giants")
    view: dict[str, Any] = engine.view(engine.new_game(3, engine.validate_options(3, {}), 1), None)
    for column, row_number in ISLAND.land_order:
        marked = copy.deepcopy(view)
        marked["board"] = {f"{column},{row_number}": {"c2": [1]}}
        marked["statues"] = {}
        lines, row, x = locate(render_game("giants", marked), "c2")
        rulers = [line for line in lines if line.split()[:3] == ["0", "1", "2"]]
        assert len(rulers) == 2  # above and below the island
        # Odd rows sit half a hex (2 characters) right of the column number.
        at = x - (2 if row_number % 2 else 0)
        assert {ruler[at:].split()[0] for ruler in rulers} == {str(column)}
        assert lines[row].split()[0] == str(row_number)
