"""Run a bot as an ordinary protocol client: `giants bot` and server-filled bot seats.

    outcome = await run_bot("ws://127.0.0.1:8765", room_id, "mcts", seat=1)
    outcome = await run_bot(url, room_id, "random", token=seat_token)   # resume a seat

The bot connects with the client library, takes (or resumes) its seat, and answers
every turn with `bot.choose(view, legal)`, where `view` is the seat's engine view
(the "game" part of the room view the server sent) and `legal` the server's list.
It sees nothing else. The client reconnects by itself after a dropped connection and
resumes the seat with its token; the loop simply waits for the room to be current
again. A server that wants bundled bots in seats can start `run_bot` as a task that
connects to its own port with the seat's token.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

from client_cli.bots.sdk import decide, make_bot
from client_cli.client import (
    Client,
    ClientClosed,
    ConnectionLost,
    RequestFailed,
    RoomLost,
    SeatStore,
    TrackedRoom,
)
from engines.bots.base import Bot, BotContext, BotError, StepTracker

log = logging.getLogger("giants.bot")

# Codes after which the bot just waits for the next change and tries again.
RATE_LIMIT_PAUSE = 0.5  # seconds to wait after a rate_limited reply without retry_after
RETRY_CODES = {"not_your_turn", "stale_version", "illegal_action", "bad_notation", "not_started", "game_over"}


async def play_seat(
    client: Client,
    room: TrackedRoom,
    bot: Bot,
    *,
    on_move: Callable[[str], None] | None = None,
    threaded: bool = True,
) -> dict[str, Any] | None:
    """Play `room`'s seat with `bot` until the game ends; return the outcome.

    Returns None if the room is lost for good (bad token, room gone, client closed).
    A synchronous bot thinks in a worker thread (`threaded`), so the event loop keeps
    serving the connection (and, in a server, every other room) meanwhile.
    """
    assert room.seat is not None, "play_seat needs a seated room"
    seat = room.seat
    tracker = StepTracker()
    fallback = bot.rng
    while True:
        try:
            legal = await room.wait_turn()
        except RoomLost as exc:
            log.warning("bot lost room %s: %s", room.id, exc)
            return None
        if not legal:
            return room.outcome
        before = room.to_act
        if not tracker.should_act(seat, before):
            await _wait_change(room)
            continue
        version = room.version
        try:
            action = await decide(bot, room.game, legal, threaded=threaded)
        except Exception as exc:  # a bot bug must not stall the table
            log.error("bot %s failed to choose (%s); playing a random legal action", bot.name, exc)
            action = fallback.choice(legal)
        try:
            await client.act(room.id, action)
        except RequestFailed as exc:
            log.info("bot %s: %s refused: %s", bot.name, action, exc)
            if str(exc.code) == "rate_limited":
                # Fast bots can outrun the server's per-connection limit: slow down.
                await asyncio.sleep(float(exc.detail.get("retry_after", RATE_LIMIT_PAUSE)))
                continue
            if str(exc.code) not in RETRY_CODES:
                raise
            if str(exc.code) in ("illegal_action", "bad_notation") and action not in legal:
                action = fallback.choice(legal)  # the bot went off the list: play a listed one
                try:
                    await client.act(room.id, action)
                except RequestFailed:
                    await _wait_change(room, version)
                    continue
            else:
                await _wait_change(room, version)
                continue
        except ConnectionLost:
            # The action may or may not have landed; the client reconnects, resumes the
            # seat and resyncs, and the next snapshot tells us whose turn it is.
            await _wait_change(room, version)
            continue
        except ClientClosed:
            return None
        if on_move is not None:
            on_move(action)
        tracker.acted(seat, before, room.to_act)


async def _wait_change(room: TrackedRoom, after: int | None = None) -> None:
    with contextlib.suppress(RoomLost):  # the caller's next wait_turn reports it
        await room.wait_change(after)


def context_for(room: TrackedRoom, seed: int | None, params: Mapping[str, Any] | None) -> BotContext:
    """The bot's context from the room view's public header (game, rules, seats)."""
    info = room.info
    if room.seat is None:
        raise BotError("a bot needs a seat, not a spectator's place")
    return BotContext(
        game=str(info.get("game")),
        rules=str(info.get("rules")),
        seat=room.seat,
        players=int(info.get("players") or len(info.get("seats") or [])),
        seed=seed,
        params=dict(params or {}),
    )


async def run_bot(
    url: str,
    room: str,
    bot: str,
    *,
    seat: int | None = None,
    token: str | None = None,
    password: str | None = None,
    name: str | None = None,
    seed: int | None = None,
    params: Mapping[str, Any] | None = None,
    on_move: Callable[[str], None] | None = None,
    on_seated: Callable[[TrackedRoom], None] | None = None,
    seats: SeatStore | None = None,
) -> dict[str, Any] | None:
    """Connect to `url`, take a seat in `room` (join `seat`, or resume with `token`) and
    play it with the bot spec `bot` until the game ends. Returns the outcome map (None
    if the room was lost). Raises BotError for an unknown bot, RequestFailed if the
    seat cannot be taken, OSError if the server cannot be reached.

    With `seats` (`SeatStore.default()`, as `giants bot` does) the seat's token is kept
    on disk and a bot restarted on the same room resumes its seat instead of joining.
    """
    client = Client(url, name=name or f"bot {bot.split(',')[0]}", client_name="giants-bot/0.1", seats=seats,
                    room=room)
    async with client:
        if token is not None:
            tracked = await client.resume(room, token)
        else:
            tracked = await client.join(room, seat, password)
        if on_seated is not None:
            on_seated(tracked)
        instance = make_bot(bot, context_for(tracked, seed, params))
        return await play_seat(client, tracked, instance, on_move=on_move)


def run_bot_task(url: str, room: str, bot: str, **kwargs: Any) -> asyncio.Task[dict[str, Any] | None]:
    """`run_bot` as a task on the running loop (what a server does for a bot seat)."""
    return asyncio.get_running_loop().create_task(run_bot(url, room, bot, **kwargs), name=f"bot {bot} {room}")
