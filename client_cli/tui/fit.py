"""Fitting a screen of text to the board pane's width without breaking a board.

Prose (headers, legends, move lists, messages) is wrapped at spaces, each continuation
indented like its line; board drawings (rows of cells and their labels, tables of
short tokens) are never wrapped, so a hex row stays one row — the pane scrolls
sideways when a board is wider than the window. A line counts as prose when it holds
a word of four or more letters: cells, stacks, labels and coordinates never do. Lists
of moves set apart with " | " are wrapped between moves, never inside one.
"""

from __future__ import annotations

import re
import textwrap

WORD = re.compile(r"[^\W\d_]{4,}")


def is_prose(line: str) -> bool:
    """Whether `line` may be wrapped (it holds a real word), as opposed to a board row."""
    return WORD.search(line) is not None


def fit(text: str, width: int) -> str:
    """`text` with every prose line longer than `width` wrapped to it (width >= 20)."""
    width = max(20, width)
    out: list[str] = []
    for line in text.splitlines():
        if len(line) <= width or not is_prose(line):
            out.append(line)
            continue
        indent = " " * min(len(line) - len(line.lstrip(" ")) + 2, width // 2)
        if " | " in line:
            out.extend(_wrap_items(line.split(" | "), width, indent))
            continue
        out.extend(textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False,
                                 break_long_words=True, drop_whitespace=True))
    return "\n".join(out)


def _wrap_items(items: list[str], width: int, indent: str) -> list[str]:
    """Items joined with " | " in lines of at most `width` (an item longer than a line
    gets a line of its own)."""
    lines = [items[0]]
    for item in items[1:]:
        if len(lines[-1]) + 3 + len(item) <= width:
            lines[-1] += " | " + item
        else:
            lines[-1] += " |"
            lines.append(indent + item)
    return lines
