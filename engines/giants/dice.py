"""GIANTS chance (GI-5 … GI-7): every roll and the first player derive from one seed.

The seed stays hidden until the game ends (GI-28, GI-30); views carry its commitment
from the first view on. Anyone can check a finished game with these public functions:

    commitment(seed) == view["seed_commitment"]        # the published hash
    roll(seed, turn, dice_count)                        # faces rolled in that turn
    first_player(seed, players)                         # the seat holding the pawn in turn 1

Byte encodings (ASCII, decimal integers without leading zeros or '+'):
- commitment: sha256(b"giants-seed:" + str(seed)), as 64 lowercase hex digits;
- die i (0-based) of turn t: h = sha256(b"giants-die:" + seed + b":" + t + b":" + i);
  face = FACES[int.from_bytes(h[:8], "big") % 6];
- first player: int.from_bytes(sha256(b"giants-first:" + seed)[:8], "big") % players.
"""

from __future__ import annotations

import hashlib

# DECIDED (GI-5): 0 is a broken Moai (nothing), 1-3 the Moai size.
FACES: tuple[int, ...] = (0, 1, 1, 2, 2, 3)


def dice_count(players: int) -> int:
    """GI-5: 3 dice for 2-3 players, 4 for 4, 5 for 5."""
    return max(3, players)


def commitment(seed: int) -> str:
    """The published hash of the seed (lowercase hex sha256 of b"giants-seed:<seed>")."""
    return hashlib.sha256(f"giants-seed:{seed}".encode("ascii")).hexdigest()


def _draw(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("ascii")).digest()[:8], "big")


def roll(seed: int, turn: int, count: int) -> list[int]:
    """The raw faces of turn `turn` (1-based), before the turn-1 rule of GI-7."""
    return [FACES[_draw(f"giants-die:{seed}:{turn}:{i}") % 6] for i in range(count)]


def moai_sizes(faces: list[int], turn: int) -> list[int]:
    """GI-7: the Moai sizes the faces ask for (turn 1: 0 counts as 1, 3 as 2)."""
    if turn == 1:
        faces = [1 if f == 0 else 2 if f == 3 else f for f in faces]
    return [f for f in faces if f > 0]


def first_player(seed: int, players: int) -> int:
    """GI-1: the seat that holds the first-player pawn in turn 1."""
    return _draw(f"giants-first:{seed}") % players
