"""Room passwords: a slow salted hash, and a bound on wrong guesses.

Stored form: `scrypt$<n>$<r>$<p>$<salt hex>$<hash hex>` (stdlib `hashlib.scrypt`, a
fresh 16-byte salt per room). Rooms stored before scrypt hold a bare sha256 hex of
`salt + password` (salt in meta["salt"]); those still verify, so old rooms keep
working, and new rooms never get that form.

Verifying costs tens of milliseconds of CPU by design, so it runs in a worker thread
(`hashlib.scrypt` releases the GIL) and never under a room's lock; a password once
verified for a room is remembered (as its sha256) so rejoining costs nothing.

Wrong guesses are bounded per room here (`require`) and per address by the
connection, both with `server.limits.GuessLimiter`.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets

from server.errors import RequestError
from server.limits import GuessLimiter

SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
_MAXMEM = 64 * 1024 * 1024


def hash_password(password: str) -> str:
    """The stored form of a new room's password (slow: call it off the event loop)."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, maxmem=_MAXMEM)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str, legacy_salt: str = "") -> bool:
    """Whether `password` matches `stored` (scrypt form, or the old sha256 form)."""
    if stored.startswith("scrypt$"):
        try:
            _, n, r, p, salt, expected = stored.split("$")
            digest = hashlib.scrypt(
                password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p), maxmem=_MAXMEM
            )
        except ValueError:
            return False
        return hmac.compare_digest(digest.hex(), expected)
    legacy = hashlib.sha256((legacy_salt + password).encode()).hexdigest()
    return hmac.compare_digest(legacy, stored)


async def hash_password_async(password: str) -> str:
    return await asyncio.to_thread(hash_password, password)


async def verify_password_async(password: str, stored: str, legacy_salt: str = "") -> bool:
    return await asyncio.to_thread(verify_password, password, stored, legacy_salt)


async def require(
    password: str | None,
    stored: str | None,
    legacy_salt: str,
    guesses: GuessLimiter,
    key: str,
    opened: set[str],
) -> None:
    """Return if `password` opens a room whose stored hash is `stored` (None: no
    password needed); else raise bad_password, or too_many_guesses once `key` (the
    room) has missed too often. `opened` remembers passwords already verified."""
    if stored is None:
        return
    guesses.check(key)
    if password is not None:
        mark = hashlib.sha256(password.encode()).hexdigest()
        if mark in opened:
            return
        if await verify_password_async(password, stored, legacy_salt):
            if len(opened) >= 8:
                opened.clear()
            opened.add(mark)
            return
        guesses.failed(key)
    raise RequestError("bad_password", "this room needs the right password")
