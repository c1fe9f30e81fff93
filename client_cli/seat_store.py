"""Seat tokens kept on disk, so a player (or a bot) gets their seat back after quitting.

    store = SeatStore.default()                  # ~/.local/state/giants-table/seats.json
    store.save(url, room, seat=0, token=t, game="tara", rules="singles")
    entry = store.find(url, room)                # the seat held in that room, or None
    store.entries(url)                           # "my games" on one server, newest first

The file is per user: `$XDG_STATE_HOME/giants-table/seats.json` (default
`~/.local/state/giants-table/`), or `$GIANTS_STATE_DIR/seats.json` when set. It holds
secrets (a token is the only proof of a seat), so the directory is created 0700 and the
file written 0600, atomically (write to a temp file, then rename) under an advisory lock,
so two clients saving at once lose nothing. Entries are keyed by the server's URL
(normalised: `normalize_url`) and the room id; one seat per room per server.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock; saves stay atomic
    fcntl = None  # type: ignore[assignment]

MAX_ENTRIES = 200  # oldest entries are dropped beyond this (finished games linger otherwise)


def normalize_url(url: str) -> str:
    """The WebSocket URL a user meant: `host:port` and `http(s)://` work too.

    `127.0.0.1:8765` -> `ws://127.0.0.1:8765`, `https://h/` -> `wss://h`; a trailing
    slash is dropped so that every spelling of one server finds the same seats.
    """
    text = url.strip()
    lowered = text.lower()
    if lowered.startswith("http://"):
        text = "ws://" + text[7:]
    elif lowered.startswith("https://"):
        text = "wss://" + text[8:]
    elif not lowered.startswith(("ws://", "wss://")):
        text = "ws://" + text
    return text.rstrip("/")


def state_dir() -> Path:
    """Where per-user client state lives (see the module docstring)."""
    explicit = os.environ.get("GIANTS_STATE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "giants-table"


@dataclass
class SeatEntry:
    """One seat held: where, which, its token, and what to show in "my games"."""

    url: str
    room: str
    seat: int
    token: str
    game: str = ""
    rules: str = ""
    name: str = ""
    saved: float = 0.0  # unix time of the last save
    status: str = ""  # last status seen: waiting, playing, finished
    result: str = ""  # a short result once finished ("won", "lost", "draw", "aborted", ...)

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> SeatEntry | None:
        try:
            return cls(
                url=str(data["url"]), room=str(data["room"]), seat=int(data["seat"]), token=str(data["token"]),
                game=str(data.get("game", "")), rules=str(data.get("rules", "")), name=str(data.get("name", "")),
                saved=float(data.get("saved", 0.0)), status=str(data.get("status", "")),
                result=str(data.get("result", "")),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError):
            return None


class SeatStore:
    """The token file. Every method re-reads it, so several clients can share it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def default(cls) -> SeatStore:
        return cls(state_dir() / "seats.json")

    # -- reading --------------------------------------------------------------------

    def _read(self) -> list[SeatEntry]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []  # missing or damaged: start afresh rather than fail the client
        items = raw.get("seats") if isinstance(raw, dict) else None
        entries = [SeatEntry.from_data(d) for d in items or [] if isinstance(d, dict)]
        return [e for e in entries if e is not None]

    def entries(self, url: str | None = None) -> list[SeatEntry]:
        """Seats held (on `url` only, if given), most recently saved first."""
        key = normalize_url(url) if url is not None else None
        found = [e for e in self._read() if key is None or e.url == key]
        return sorted(found, key=lambda e: e.saved, reverse=True)

    def find(self, url: str, room: str, seat: int | None = None) -> SeatEntry | None:
        """The seat held in `room` on `url` (that seat only, if `seat` is given)."""
        key = normalize_url(url)
        for entry in self._read():
            if entry.url == key and entry.room == room and (seat is None or entry.seat == seat):
                return entry
        return None

    # -- writing --------------------------------------------------------------------

    def save(self, url: str, room: str, seat: int, token: str, **info: Any) -> SeatEntry:
        """Remember (or refresh) the seat held in `room`; `info` sets game, rules, name,
        status, result. Returns the stored entry."""
        key = normalize_url(url)
        with self._locked() as entries:
            old = next((e for e in entries if e.url == key and e.room == room), None)
            entry = old if old is not None and old.token == token else SeatEntry(key, room, seat, token)
            entry.seat = seat
            for field_name, value in info.items():
                if value is not None and hasattr(entry, field_name):
                    setattr(entry, field_name, value)
            entry.saved = time.time()
            entries[:] = [e for e in entries if not (e.url == key and e.room == room)] + [entry]
            if len(entries) > MAX_ENTRIES:
                entries.sort(key=lambda e: e.saved)
                del entries[: len(entries) - MAX_ENTRIES]
        return entry

    def update(self, url: str, room: str, **info: Any) -> None:
        """Change what is shown for a held seat (status, result); no-op if none is held."""
        key = normalize_url(url)
        with self._locked() as entries:
            for entry in entries:
                if entry.url == key and entry.room == room:
                    for field_name, value in info.items():
                        if hasattr(entry, field_name):
                            setattr(entry, field_name, value)

    def forget(self, url: str, room: str) -> None:
        """Drop the seat of `room` (the server no longer knows it, or it was given up)."""
        key = normalize_url(url)
        with self._locked() as entries:
            entries[:] = [e for e in entries if not (e.url == key and e.room == room)]

    @contextlib.contextmanager
    def _locked(self) -> Iterator[list[SeatEntry]]:
        """Read-modify-write under an exclusive lock; the file is replaced atomically."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock_path = self.path.with_name(self.path.name + ".lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            entries = self._read()
            yield entries
            self._write(entries)
        finally:
            os.close(fd)  # closing releases the lock

    def _write(self, entries: list[SeatEntry]) -> None:
        data = json.dumps({"version": 1, "seats": [asdict(e) for e in entries]}, indent=1)
        fd, tmp = tempfile.mkstemp(prefix=".seats-", dir=self.path.parent)  # created 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(data)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
