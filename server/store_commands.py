"""The commit script's commands: a plain move's EVALSHA written as RESP in one piece,
and the arguments and keys of any write (`CommitArgs._write_args`). `Store.commit`
(server.store) decides which one a write takes and submits it; tests check both make
what `commit_pipe.pack` makes of the command."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from server.store_base import EMPTY_LIST, StoredFields, StoreKeys

_LENGTHS = tuple(b"$%d\r\n" % n for n in range(1024))  # RESP's length lines: no int formatted per argument
# RESP bulk strings of the integers below BULK_INTS (a plain move's guards: its room's
# hash version, action count and fence; ~120 KB).
BULK_INTS = 2048
_BULK_INTS = tuple(b"%s%d\r\n" % (_LENGTHS[len(str(i))], i) for i in range(BULK_INTS))
# Rooms whose plain moves' command head `Store.commit` keeps (`move_head`, about 170
# bytes each: at most ~0.7 MB; the table is emptied when full).
MOVE_HEADS = 4096


def move_head(sha: str, room_key: str, log_key: str) -> bytes:
    """What a plain move's EVALSHA of the commit script (`sha`, the room's two keys)
    has in common with every other move of the room, in RESP: the command up to its
    arguments. Empty if that command cannot be written in one piece: a key not ASCII
    (its length in characters would not be its length in bytes) or 1 KiB or longer,
    or `sha` not a SHA1's 40 digits (the command is then sent as it is)."""
    if len(sha) != 40 or len(room_key) >= len(_LENGTHS) or len(log_key) >= len(_LENGTHS):
        return b""
    head = f"*10\r\n$7\r\nEVALSHA\r\n$40\r\n{sha}\r\n$1\r\n2\r\n${len(room_key)}\r\n{room_key}\r\n${len(log_key)}\r\n{log_key}\r\n"
    return head.encode() if head.isascii() else b""


def move_command(sha: str, keys: list[str], args: list[Any]) -> bytes | None:
    """A plain move's EVALSHA of the commit script as RESP: what `commit_pipe.pack`
    makes of the command, or None when `move_head` is empty or an argument is 1 KiB or
    longer. `Store.commit` writes the same bytes with the head kept per room (a test
    checks both against `pack`)."""
    head = move_head(sha, keys[0], keys[1])
    hashed, count, fence, wid, entry = args
    if not head or len(wid) >= len(_LENGTHS) or len(entry) >= len(_LENGTHS) or not wid.isascii():
        return None
    arguments = [str(hashed).encode(), str(count).encode(), str(fence).encode(), wid.encode(), entry]
    return head + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in arguments)


class CommitArgs(StoreKeys):
    """The general path of `Store.commit`: the commit script's arguments of any write.
    `_packb` and `plain_moves` are Store's."""

    _packb: Callable[[Any], bytes]
    plain_moves: bool

    def _write_args(
        self, room_id: str, expected: int, version: int, fence: int, status: str, seats: list[dict[str, Any]] | None,
        deadline: float | None, outcome: dict[str, Any] | None, actions: int, log_entry: dict[str, Any] | None,
        snapshot: Any, answered: Iterable[int], start_key: str, hidden: int, before: StoredFields | None,
        move_seconds: float, wid: str,
    ) -> tuple[list[Any], list[str], bool, bytes]:
        """The commit script's arguments and keys of any write `commit` was given, whether
        it is a plain move (its log entry only), and its packed log entry (b"" for none):
        `commit` submits them as they are (`_submit`)."""
        # The guards: the hash's version as of the room's last write that was not a
        # plain move, and the log's length (the action count) before this write.
        # Integers are sent as they are (RESP writes them in decimal, as str() would).
        if before is not None:
            logged, count = before.logged, before.actions
        else:
            logged, count = 0, actions - (log_entry is not None)
        packb = self._packb
        entry = b"" if log_entry is None else packb(log_entry)
        args: list[Any] = [expected - logged, count, fence, wid, entry]
        fields: list[Any] = []
        if before is None or status != before.status:
            fields += ["status", status]
        if move_seconds:
            # A plain move's deadline is its entry's time plus the seconds per move
            # (`load_room` derives it): the hash's is older once one was stored.
            ts = log_entry.get("ts") if log_entry is not None else None
            derived = isinstance(ts, float) and deadline == ts + move_seconds
            send_deadline = before is None or before.logged > 0 or deadline != before.deadline
        else:
            derived = before is not None and deadline == before.deadline
            send_deadline = not derived
        if before is None or outcome != before.outcome:
            fields += ["outcome", b"" if outcome is None else packb(outcome)]
        if before is None or answered != before.answered:
            fields += ["answered", packb(sorted(answered)) if answered else EMPTY_LIST]
        if before is None or start_key != before.start_key:
            fields += ["start_key", start_key]
        if before is None or hidden != before.hidden:
            fields += ["hidden", hidden]
        if seats is not None:
            fields += ["seats", packb(seats)]
        move = self.plain_moves and not fields and derived and snapshot is None and log_entry is not None and actions == count + 1
        keys = [self.k_room(room_id), self.k_log(room_id)]
        if not move:
            # The hash too: the new version, the write id, the action count, what changed.
            if send_deadline:
                fields += ["deadline", "" if deadline is None else repr(deadline)]
            args.append(version)
            if snapshot is not None:
                keys.append(self.k_snap(room_id))
                args += [actions, packb(snapshot)]
            args += ["actions", actions, *fields]
        return args, keys, move, entry
