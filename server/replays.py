"""A finished game's positions, computed from its stored action log, for replay viewers.

Clients hold no rules code, so a replay viewer cannot turn the action list into
boards itself. `positions()` replays the log through the engine and returns the
*spectator* view before the first action plus, per action, the ops (the patch format
of `protocol.patch`) that turn one spectator view into the next. The viewer applies
them forward and keeps the views it built to step back. Only spectator views and
public action texts are returned: a replay shows what the table saw, never a seat's
hidden screen.

Finished rooms never change, so results are kept in a small bounded cache: asking
again (a viewer reloading, many people watching a replay) costs nothing.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from engines import registry
from engines.base import GameError
from protocol.patch import diff

_CACHE_SIZE = 64
_cache: OrderedDict[str, dict[str, Any]] = OrderedDict()


async def positions(room_id: str, replay: Mapping[str, Any]) -> dict[str, Any]:
    """`{"view": <spectator game view at the start>, "to_act": [...], "steps": [{seat, action,
    ops, to_act}]}`, `to_act` being the seats to act in that position (views leave it to
    the room's part, which a replay has not).

    `replay` is the data of a `replay` reply (game, rules, players, options, seed and
    the stored actions). `action` in a step is the public text (a GIANTS sealed bid is
    "bid"); a step whose action the table never saw (a replaced sealed bid) has
    `action` null. If the log stops replaying (a stored action the engine refuses) the
    steps end there and `"complete": false` says so; the caller still has a usable viewer.
    """
    cached = _cache.get(room_id)
    if cached is not None:
        _cache.move_to_end(room_id)
        return cached
    # Replaying a game costs about what playing it cost the server (apply, view and
    # diff per move: ~1-2 s of CPU for a long 5-player GIANTS game). It runs in a
    # worker thread so the event loop keeps serving rooms, one computation at a time
    # so that requests for many different replays queue instead of taking every core.
    async with _one_at_a_time():
        cached = _cache.get(room_id)  # computed while this request waited
        if cached is not None:
            return cached
        result = await asyncio.to_thread(_compute, replay)
    _cache[room_id] = result
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return result


_locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}


def _one_at_a_time() -> asyncio.Lock:
    # One lock per event loop (each `giants serve --workers` process has one loop;
    # tests may run several servers on one loop).
    loop = asyncio.get_running_loop()
    lock = _locks.get(loop)
    if lock is None:
        _locks.clear()  # a finished loop's lock is of no use any more
        lock = _locks[loop] = asyncio.Lock()
    return lock


def _compute(replay: Mapping[str, Any]) -> dict[str, Any]:
    engine = registry.get_engine(replay["game"], replay["rules"])
    state = engine.new_game(replay["players"], replay["options"], replay["seed"])
    view = engine.view(state, None)
    start = view
    first = sorted(engine.to_act(state))
    steps: list[dict[str, Any]] = []
    complete = True
    entries: Sequence[Mapping[str, Any]] = replay["actions"]
    for entry in entries:
        seat = entry["seat"]
        try:
            action = engine.parse_action(state, seat, entry["action"])
            public = engine.public_action(state, seat, action)
            state = engine.apply(state, seat, action).state
        except (GameError, KeyError, TypeError, ValueError):
            complete = False
            break
        new_view = engine.view(state, None)
        steps.append({"seat": seat, "action": public, "ops": diff(view, new_view),
                      "to_act": sorted(engine.to_act(state))})
        view = new_view
    return {"view": start, "to_act": first, "steps": steps, "complete": complete}
