"""Text from the network made safe to print on a terminal.

Names, room ids, error messages and moves come from other people (through the
server). Printed as they are, control characters (ANSI escape sequences), bidi
overrides or zero-width marks could rewrite the screen or disguise one name as
another. `printable` keeps line breaks and replaces every other control or format
character with a visible `\\uXXXX` escape. Rich markup is not a concern where this is
used: the Textual widgets showing it have markup off.
"""

from __future__ import annotations

import unicodedata


def printable(text: str) -> str:
    """`text` with each control/format character except newline shown as `\\uXXXX`."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch == "\n" or (ch != "\t" and unicodedata.category(ch)[0] != "C"
                          and unicodedata.category(ch) not in ("Zl", "Zp")):
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}")
    return "".join(out)
