"""How every benchmark runs its own side (load generator, probes): on uvloop when it is
installed (the `speed` extra), else on asyncio's default loop.

    from bench.loop import run_main
    raise SystemExit(run_main(main()))

The servers a benchmark starts choose their loop themselves (`giants serve --loop`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_main(main: Coroutine[Any, Any, T]) -> T:
    """Run `main` to completion on a new event loop and return its result."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)
