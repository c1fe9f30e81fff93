"""The per-user seat file: tokens survive the client, private to the user, shared safely."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from client_cli.seat_store import SeatStore, normalize_url, state_dir


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("127.0.0.1:8765", "ws://127.0.0.1:8765"),
        ("ws://127.0.0.1:8765/", "ws://127.0.0.1:8765"),
        ("http://example.org:80", "ws://example.org:80"),
        ("HTTPS://example.org/", "wss://example.org"),
        ("wss://example.org/games", "wss://example.org/games"),
        ("  localhost:1  ", "ws://localhost:1"),
    ],
)
def test_normalize_url(given: str, expected: str) -> None:
    assert normalize_url(given) == expected


def test_state_dir_follows_xdg_and_the_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GIANTS_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir() == tmp_path / "xdg" / "giants-table"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert state_dir() == tmp_path / "home" / ".local" / "state" / "giants-table"
    monkeypatch.setenv("GIANTS_STATE_DIR", str(tmp_path / "mine"))
    assert state_dir() == tmp_path / "mine"


def test_save_find_forget_and_file_modes(tmp_path: Path) -> None:
    store = SeatStore(tmp_path / "state" / "seats.json")
    assert store.find("ws://h:1", "r1") is None
    store.save("h:1", "r1", 0, "tok-a", game="tara", rules="singles", status="playing")
    store.save("ws://h:1/", "r2", 1, "tok-b", game="giants")
    store.save("ws://other:2", "r1", 1, "tok-c")
    entry = store.find("ws://h:1", "r1")
    assert entry is not None and (entry.seat, entry.token, entry.game) == (0, "tok-a", "tara")
    assert store.find("h:1", "r1", seat=1) is None
    assert [e.room for e in store.entries("ws://h:1")] == ["r2", "r1"]  # newest first
    assert len(store.entries()) == 3
    # Only the user may read the tokens.
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(store.path.parent).st_mode) == 0o700
    store.update("ws://h:1", "r1", status="finished", result="won")
    entry = store.find("ws://h:1", "r1")
    assert entry is not None and entry.result == "won" and entry.token == "tok-a"
    store.forget("ws://h:1", "r1")
    assert store.find("ws://h:1", "r1") is None
    assert store.find("ws://other:2", "r1") is not None  # another server's room of that id


def test_a_damaged_file_is_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "seats.json"
    path.write_text("{not json")
    store = SeatStore(path)
    assert store.entries() == []
    store.save("ws://h:1", "r", 0, "t")
    assert store.find("ws://h:1", "r") is not None


def test_concurrent_saves_lose_nothing(tmp_path: Path) -> None:
    store = SeatStore(tmp_path / "seats.json")

    def save_many(prefix: str) -> None:
        for i in range(25):
            SeatStore(store.path).save("ws://h:1", f"{prefix}{i}", 0, f"t{prefix}{i}")

    threads = [threading.Thread(target=save_many, args=(p,)) for p in "abcd"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.entries("ws://h:1")) == 100
