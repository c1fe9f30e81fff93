"""The group commit's channel (server/commit_pipe.py) against a real Redis: replies in
order with error replies typed as redis-py types them, and a lost or silent
connection failing the batch with the exception types the store classifies."""

from __future__ import annotations

import asyncio
import random

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.commit_pipe import CommitPipe, GroupSender, _pack_python, pack
from tests.fault_proxy import FaultProxy
from tests.server.capture_transport import CaptureTransport

INCR_BY = "return redis.call('INCRBY', KEYS[1], ARGV[1])"


async def test_a_batch_gets_every_reply_in_order_with_errors_in_place(redis_url: str, key_prefix: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    sha = await client.script_load(INCR_BY)
    key = f"{key_prefix}{{pipe}}:n"
    pipe = await CommitPipe.open(client, timeout=5.0)
    try:
        results = await pipe.roundtrip([
            ("EVALSHA", sha, 1, key, 5),
            ("EVALSHA", "0" * 40, 1, key, 1),  # no such script
            ("EVALSHA", sha, 1, key, b"-2"),
            ("EVALSHA", sha, 1, key, "not a number"),  # the script fails in Redis
        ])
        assert results[0] == 5 and results[2] == 3
        assert isinstance(results[1], NoScriptError)
        assert isinstance(results[3], ResponseError) and not isinstance(results[3], NoScriptError)
        assert int(await client.get(key)) == 3  # the failed commands changed nothing
        assert await pipe.roundtrip([("EVALSHA", sha, 1, key, 1)]) == [4]  # still usable
    finally:
        pipe.close()
        await client.delete(key)
        await client.aclose()


async def test_a_silent_redis_times_the_batch_out_and_closes_the_channel(redis_url: str, key_prefix: str) -> None:
    proxy = FaultProxy(redis_url)
    client = aioredis.Redis.from_url(await proxy.start())
    sha = await client.script_load(INCR_BY)
    key = f"{key_prefix}{{pipe}}:t"
    pipe = await CommitPipe.open(client, timeout=0.3)
    try:
        proxy.drop_reply(key.encode())
        with pytest.raises(RedisTimeoutError):
            await pipe.roundtrip([("EVALSHA", sha, 1, key, 7)])
        assert pipe.closed  # its replies can no longer be matched: a new channel is needed
        with pytest.raises(RedisConnectionError):
            await pipe.roundtrip([("EVALSHA", sha, 1, key, 1)])
        assert int(await client.get(key)) == 7  # it ran; only its reply was lost
    finally:
        pipe.close()
        await client.delete(key)
        await client.aclose()
        await proxy.stop()


async def test_a_cut_connection_fails_the_batch_in_flight(redis_url: str, key_prefix: str) -> None:
    proxy = FaultProxy(redis_url)
    client = aioredis.Redis.from_url(await proxy.start())
    sha = await client.script_load(INCR_BY)
    key = f"{key_prefix}{{pipe}}:c"
    pipe = await CommitPipe.open(client, timeout=5.0)
    try:
        proxy.stall()
        pending = pipe.roundtrip([("EVALSHA", sha, 1, key, 1)])
        task = asyncio.ensure_future(pending)
        await asyncio.sleep(0.05)
        await proxy.close_all()
        with pytest.raises(RedisConnectionError):
            await task
        assert pipe.closed
    finally:
        proxy.release()
        pipe.close()
        await client.aclose()
        await proxy.stop()
        direct = aioredis.Redis.from_url(redis_url)
        await direct.delete(key)
        await direct.aclose()


@pytest.mark.parametrize("packer", [pack, _pack_python])
def test_pack_is_the_resp_redis_reads(packer) -> None:
    """With hiredis (the speed extra) or without, the same bytes; a float is refused."""
    expected = b"*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nv\r\n\r\n$2\r\n12\r\n*1\r\n$4\r\nPING\r\n"
    assert packer([("SET", "k", b"v\r\n", 12), ("PING",)]) == expected
    # A command given as bytes is its RESP already (a plain move's, server.store.move_command).
    assert packer([("SET", "k", b"v\r\n", 12), b"*1\r\n$4\r\nPING\r\n"]) == expected
    assert packer([b"*1\r\n$4\r\nPING\r\n"]) == b"*1\r\n$4\r\nPING\r\n"
    with pytest.raises(TypeError):
        packer([("SET", "k", 1.5)])


async def test_replies_split_anywhere_or_run_together_are_parsed_alike() -> None:
    """Redis may deliver a batch's replies in pieces cut anywhere, or several batches'
    replies in one read: each batch gets its own, in order."""
    wire = b":1\r\n:-2\r\n-NOSCRIPT No matching script\r\n:30\r\n"
    for cuts in [(), (1,), (2, 3), (4, 5, 9, 12), tuple(range(1, len(wire)))]:
        pipe = CommitPipe(timeout=None)
        pipe.transport = CaptureTransport()  # type: ignore[assignment]
        got: list[object] = []
        pipe.send([("A",), ("B",)], got.append)
        pipe.send([("C",), ("D",)], got.append)
        for start, end in zip((0, *cuts), (*cuts, len(wire)), strict=True):
            pipe.data_received(wire[start:end])
        assert got[0] == [1, -2], cuts
        assert isinstance(got[1], list) and isinstance(got[1][0], NoScriptError) and got[1][1] == 30, cuts
        assert not pipe.closed and not pipe._buf


async def test_every_integer_reply_is_parsed_as_int_parses_it() -> None:
    """`:1` (a commit applied) is told apart without int(); every other integer, near
    it too (`:10`, `:11`, `:-1`, `:21`), is parsed as before, whole or cut anywhere."""
    values = [1, 10, 11, -1, 21, 0, 2, 1, 100, -11, 2**40, 1]
    wire = b"".join(b":%d\r\n" % value for value in values)
    for cuts in [(), (1,), (2, 3), tuple(range(1, len(wire)))]:
        pipe = CommitPipe(timeout=None)
        pipe.transport = CaptureTransport()  # type: ignore[assignment]
        got: list[object] = []
        pipe.send([("A",)] * len(values), got.append)
        for start, end in zip((0, *cuts), (*cuts, len(wire)), strict=True):
            pipe.data_received(wire[start:end])
        assert got == [values] and all(type(v) is int for v in got[0]), cuts  # type: ignore[union-attr]
        assert not pipe.closed and not pipe._buf


async def test_a_reply_nobody_asked_for_closes_the_channel() -> None:
    pipe = CommitPipe(timeout=None)
    pipe.transport = CaptureTransport()  # type: ignore[assignment]
    got: list[object] = []
    pipe.send([("A",)], got.append)
    pipe.data_received(b":1\r\n:2\r\n")
    assert got == [[1]] and pipe.closed


async def test_each_batch_times_out_its_own_timeout_after_it_was_sent(redis_url: str, key_prefix: str) -> None:
    """One timer watches every batch in flight: a batch sent while it is armed for an
    earlier one (answered since) still gets its whole timeout, and no more."""
    proxy = FaultProxy(redis_url)
    client = aioredis.Redis.from_url(await proxy.start())
    sha = await client.script_load(INCR_BY)
    key = f"{key_prefix}{{pipe}}:w"
    pipe = await CommitPipe.open(client, timeout=0.4)
    loop = asyncio.get_running_loop()
    try:
        assert await pipe.roundtrip([("EVALSHA", sha, 1, key, 1)]) == [1]  # arms the timer
        await asyncio.sleep(0.25)
        proxy.drop_reply(key.encode())
        sent = loop.time()
        with pytest.raises(RedisTimeoutError):
            await pipe.roundtrip([("EVALSHA", sha, 1, key, 1)])
        waited = loop.time() - sent
        assert 0.38 <= waited < 3.0, waited
        assert pipe.closed
    finally:
        pipe.close()
        await client.delete(key)
        await client.aclose()
        await proxy.stop()


async def test_commands_of_one_turn_of_the_loop_leave_as_one_batch(redis_url: str, key_prefix: str) -> None:
    """Many tasks calling at once share one write; each gets its own reply; a batch
    sent while another is in flight does not wait for it."""
    client = aioredis.Redis.from_url(redis_url)
    sha = await client.script_load(INCR_BY)
    batches: list[int] = []
    sender = GroupSender(client, timeout=5.0, on_batch=lambda size, _: batches.append(size))
    keys = [f"{key_prefix}{{group}}:{i}" for i in range(50)]
    try:
        first = await asyncio.gather(*(sender.call("EVALSHA", sha, 1, k, i + 1) for i, k in enumerate(keys)))
        assert first == [i + 1 for i in range(50)]
        assert batches == [50]
        # Two turns of the loop: two batches, the second written before the first's reply.
        a = asyncio.ensure_future(sender.call("EVALSHA", sha, 1, keys[0], 100))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        b = asyncio.ensure_future(sender.call("EVALSHA", sha, 1, keys[0], 1000))
        assert await a == 101 and await b == 1101
        assert batches == [50, 1, 1]
        with pytest.raises(NoScriptError):  # an error reply is raised to its caller only
            await asyncio.gather(sender.call("EVALSHA", "0" * 40, 1, keys[1], 1))
    finally:
        sender.close()
        await client.delete(*keys)
        await client.aclose()


def test_a_closed_sender_serves_the_loop_it_is_used_in_next(redis_url: str, key_prefix: str) -> None:
    """A sender keeps the loop of its first command (its futures' and its flush's) until
    it is closed: used again in another loop's run, it answers there, and a sender used
    in one loop at a time never schedules on a loop that has stopped."""
    key = f"{key_prefix}{{loops}}:n"
    sender = GroupSender(None, timeout=5.0)  # type: ignore[arg-type]  # its client is set in each run

    async def run(increment: int) -> tuple[int, int]:
        client = sender.client = aioredis.Redis.from_url(redis_url)
        try:
            sha = await client.script_load(INCR_BY)
            results = await asyncio.gather(*(sender.call("EVALSHA", sha, 1, key, increment) for _ in range(3)))
            assert sender._loop is asyncio.get_running_loop()
            later = await sender.call("EVALSHA", sha, 1, key, increment)  # a later turn, the same loop
            return results[-1], later
        finally:
            sender.close()
            assert sender._loop is None
            await client.aclose()

    try:
        assert asyncio.run(run(1)) == (3, 4)
        assert asyncio.run(run(10)) == (34, 44)
    finally:
        async def clean() -> None:
            client = aioredis.Redis.from_url(redis_url)
            await client.delete(key)
            await client.aclose()
        asyncio.run(clean())


async def test_send_for_completes_each_future_as_its_reply_arrives() -> None:
    """The group sender's batches (`send_for`): each command's future gets its own
    reply, an error reply raised by that future only; a channel that fails mid-batch
    fails the futures still waiting, not the ones answered; the batch is told to
    `on_batch` once, whole."""
    loop = asyncio.get_running_loop()
    pipe = CommitPipe(timeout=None)
    pipe.transport = CaptureTransport()  # type: ignore[assignment]
    heard: list[int] = []
    futures = [loop.create_future() for _ in range(3)]
    pipe.send_for([("A",), ("B",), ("C",)], futures, lambda size, _: heard.append(size))
    pipe.data_received(b":7\r\n-NOSCRIPT No matching script\r")
    assert futures[0].result() == 7 and not futures[1].done() and not heard
    pipe.data_received(b"\n:9\r\n")
    assert isinstance(futures[1].exception(), NoScriptError) and futures[2].result() == 9
    assert heard == [3]
    cut = [loop.create_future() for _ in range(2)]
    pipe.send_for([("A",), ("B",)], cut, None)
    pipe.data_received(b":1\r\n")
    pipe.connection_lost(None)
    assert cut[0].result() == 1 and isinstance(cut[1].exception(), RedisConnectionError)
    refused = [loop.create_future()]
    pipe.send_for([("A",)], refused, None)  # closed: refused at once
    assert isinstance(refused[0].exception(), RedisConnectionError)


@pytest.mark.parametrize("seed", range(20))
async def test_a_turns_batch_is_sent_as_send_sends_it(seed: int) -> None:
    """The sender's flush writes a turn's batch itself (no `_send` call): the same
    writes, the same replies to the same callers and the same batches told to
    `on_batch` as through `_send` (`own_send`, a subclass's way: replica acks), over
    turns of commands in RESP already and not, with error replies among them."""
    rng = random.Random(seed)
    turns = [[rng.choice([b"*1\r\n$1\r\nA\r\n", ("SET", "k", rng.randrange(100)), ("INCR", "n")])
              for _ in range(rng.randrange(1, 5))] for _ in range(rng.randrange(1, 6))]
    replies = [[rng.choice([b":1\r\n", b":%d\r\n" % rng.randrange(-5, 50), b"-ERR no\r\n"]) for _ in turn]
               for turn in turns]

    async def run(own_send: bool) -> tuple[list[bytes], list[object], list[int]]:
        heard: list[int] = []
        sender = GroupSender(None, timeout=5.0, on_batch=lambda size, _: heard.append(size))  # type: ignore[arg-type]
        sender.own_send = own_send
        sender._pipe = pipe = CommitPipe(5.0)
        pipe.transport = capture = CaptureTransport()  # type: ignore[assignment]
        results: list[object] = []
        for turn, answers in zip(turns, replies, strict=True):
            futures = [sender.add(command) for command in turn]
            await asyncio.sleep(0)  # the turn's flush
            pipe.data_received(b"".join(answers))
            for fut in futures:
                results.append(repr(fut.exception()) if fut.exception() else fut.result())
        pipe.close()
        return capture.written, results, heard

    assert await run(False) == await run(True)


@pytest.mark.parametrize("seed", range(30))
async def test_a_lone_applied_reply_is_taken_as_the_general_parser_takes_it(seed: int) -> None:
    """A read that is exactly `:1` and the last reply of the oldest batch, a group
    sender's (`send_for`), is taken in one step: over batches of one to three commands,
    `send` batches among them, error and other integer replies, replies in reads of
    their own or run together, a reply nobody asked for, the same futures completed
    with the same results, the same batches told to `on_batch` and to `send`'s callbacks
    in the same order, and the channel closed at the same point as when every reply
    is cut in two reads (the general parser, a reply left over); a reply nobody asked
    for (at the end, 1 in 5) closes the channel either way."""
    rng = random.Random(seed)
    batches = []
    for _ in range(rng.randrange(1, 12)):
        size = rng.choice([1, 1, 1, 2, 3])
        replies = [rng.choice([b":1\r\n", b":1\r\n", b":0\r\n", b":-2\r\n", b":12\r\n", b"-ERR no\r\n"])
                   for _ in range(size)]
        batches.append((rng.random() < 0.8, replies))
    reads = [reply for _, replies in batches for reply in replies] + ([b":1\r\n"] if rng.random() < 0.2 else [])
    if rng.random() < 0.5:  # the first two replies in one read (or a reply nobody asked for)
        reads = [b"".join(reads[:2]), *reads[2:]]

    async def run(cut: bool) -> list[object]:
        loop = asyncio.get_running_loop()
        pipe = CommitPipe(timeout=None)
        pipe.transport = CaptureTransport()  # type: ignore[assignment]
        heard: list[object] = []
        futures: list[asyncio.Future[object]] = []
        for grouped, replies in batches:
            if grouped:
                mine = [loop.create_future() for _ in replies]
                futures += mine
                pipe.send_for([("A",)] * len(replies), mine, lambda size, _: heard.append(("batch", size)))
            else:
                pipe.send([("A",)] * len(replies), lambda results: heard.append(("send", repr(results))))
        for read in reads:
            for part in ([read[:2], read[2:]] if cut else [read]):
                pipe.data_received(part)
            heard.append(("closed", pipe.closed, [repr(f.exception()) if f.done() and f.exception() else
                                                  f.result() if f.done() else None for f in futures]))
        return heard

    whole = await run(cut=False)
    assert whole == await run(cut=True)
    assert len(whole) > len(reads)  # every read was recorded
