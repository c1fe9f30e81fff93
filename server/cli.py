"""`giants serve`: run the game server until SIGINT/SIGTERM.

Every flag has an environment variable (GIANTS_HOST, GIANTS_PORT, GIANTS_DATA_DIR,
GIANTS_REDIS_URL, GIANTS_LOG_LEVEL, ...); see docs/operations.md.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from server.config import Config

    Config.add_arguments(parser)


async def _main(config: object) -> int:
    from server.app import GiantsServer
    from server.config import Config

    assert isinstance(config, Config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    server = GiantsServer(config)
    try:
        await server.start()
    except Exception as exc:
        logging.getLogger("giants.server").error("could not start: %s", exc)
        await server.stop()
        return 1
    # One parseable line for scripts and tests that start the server with --port 0.
    print(f"giants serve: listening on ws://{config.host}:{server.port}", flush=True)
    web_host = config.host if config.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    print(f"giants serve: open http://{web_host}:{server.port}/ in a browser to play", flush=True)
    try:
        await stop.wait()
    finally:
        await server.stop()
    return 0


def run(args: argparse.Namespace) -> int:
    from server.config import Config

    try:
        config = Config.from_args(args)
    except ValueError as exc:
        print(f"giants serve: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=config.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if config.loop not in ("auto", "uvloop", "asyncio"):
        print(f"giants serve: --loop must be auto, uvloop or asyncio, not {config.loop!r}", file=sys.stderr)
        return 2
    if config.loop != "asyncio":
        try:
            import uvloop
        except ImportError:
            if config.loop == "uvloop":
                print("giants serve: uvloop is not installed (pip install 'giants-table[speed]')", file=sys.stderr)
                return 2
        else:
            return int(uvloop.run(_main(config)))
    return asyncio.run(_main(config))
