"""`--replica-acks` on one Redis server (the test Redis has no replica): a commit is
applied at the master, but with no replica to confirm it within the WAIT timeout the
store never reports it stored: the room's write ends outcome-unknown, and a refused
commit is refused as without replica acks."""

from __future__ import annotations

import pytest

from server.replica_acks import ReplicatedSender
from server.store import OutcomeUnknown, StaleWriteError, Store

pytestmark = pytest.mark.redis

COMMON = {"seats": [{}], "deadline": None, "outcome": None, "actions": 1, "status": "playing"}


async def test_a_commit_no_replica_confirms_is_not_reported_stored(redis_url: str, key_prefix: str) -> None:
    store = Store(redis_url, key_prefix, replica_acks=1, replica_timeout=0.05)
    try:
        assert await store.create_room("r1", {"game": "x"}, [{}])
        entry = {"v": 1, "seat": 0, "action": "a1", "ts": 0.0}
        with pytest.raises(OutcomeUnknown, match="0 of 1 replica"):
            await store.commit("r1", expected=0, version=1, fence=1, log_entry=entry, **COMMON)
        # In at the master all the same (the room reloads it before its next write).
        assert [e["action"] for e in await store.read_log("r1")] == ["a1"]
        with pytest.raises(StaleWriteError):  # a refused write needs no replica
            await store.commit("r1", expected=0, version=1, fence=1, log_entry=entry, **COMMON)
        sender = store._commits
        assert isinstance(sender, ReplicatedSender) and sender.short_batches >= 2
        assert store.replica_shortfalls == sender.short_batches
        # A plain command on the same channel carries no WAIT and is answered at once.
        short = sender.short_batches
        assert await sender.call("EXISTS", store.k_room("r1")) == 1
        assert sender.short_batches == short
    finally:
        await store.delete_all()
        await store.close()
