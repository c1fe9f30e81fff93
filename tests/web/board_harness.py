"""A board on a page without a server: the engine runs in the test, the board in Chromium.

The page imports the real board modules from `server/web/static` (served over HTTP by
a thread), gets the context a room page would give it, and its `act` applies the
action to the engine here. Other seats are played by a seeded random policy. This
checks each board against the engine's own views and legal lists, position by
position, without depending on the room page.
"""

from __future__ import annotations

import functools
import json
import random
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from web_helpers import wait_until

from engines.base import GameError
from engines.registry import get_engine

STATIC = Path(__file__).resolve().parents[2] / "server" / "web" / "static"

PAGE = """<!doctype html><html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>board</title></head>
<body><div id="board"></div>
<script type="module">
import { boardFor } from "/boards/index.js";
function show(data) {
  const ctx = { ...data, act: (text) => window.pyAct(text).then((r) => {
      if (r.error) throw r.error;
      setTimeout(() => show(r.ctx)); // as from the server: the new position after the ok
    }) };
  boardFor(ctx.game).render(document.getElementById("board"), ctx);
}
window.gtShow = show;
window.gtReady = true;
</script></body></html>"""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class StaticServer:
    """`server/web/static` over HTTP on a free port, plus the harness page."""

    def __init__(self) -> None:
        handler = functools.partial(_Quiet, directory=str(STATIC))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class EngineTable:
    """One game played in-process: `seat` is the page's, the rest a seeded random policy."""

    def __init__(self, game: str, rules: str | None, players: int, options: dict[str, Any],
                 seat: int, seed: int = 7) -> None:
        self.engine = get_engine(game, rules)
        self.game = game
        self.rules = self.engine.info.rules
        self.players = players
        self.seat = seat
        self.state = self.engine.new_game(players, options, seed)
        self.rng = random.Random(seed)
        self.last: dict[str, Any] | None = None
        self.events: list[dict[str, Any]] = []
        self.last_events: list[dict[str, Any]] = []  # of the page's own last action
        self.sent: list[str] = []

    def others_play(self) -> None:
        """Random moves for the other seats until the page's seat must act (or the end)."""
        while self.engine.outcome(self.state) is None:
            # In a simultaneous step (GIANTS bids) the others answer first; a seat
            # that has answered is not asked again.
            others = sorted(self.engine.waiting_for(self.state) - {self.seat})
            if not others:
                return
            seat = others[0]
            action = self.rng.choice(self.engine.legal_actions(self.state, seat))
            self._apply(seat, self.engine.format_action(self.state, action))

    def _apply(self, seat: int, text: str) -> None:
        public = self.engine.public_action(self.state, seat, self.engine.parse_action(self.state, seat, text))
        tr = self.engine.apply_text(self.state, seat, text)
        self.state = tr.state
        self.events = list(tr.events)
        if public is not None:
            self.last = {"seat": seat, "action": text if seat == self.seat else public}

    def legal(self) -> list[str]:
        return [self.engine.format_action(self.state, a) for a in self.engine.legal_actions(self.state, self.seat)]

    def ctx(self) -> dict[str, Any]:
        outcome = self.engine.outcome(self.state)
        return {
            "game": self.game,
            "rules": self.rules,
            "players": self.players,
            "seat": self.seat,
            "room": {
                "status": "finished" if outcome else "playing",
                "to_act": sorted(self.engine.to_act(self.state)),
                "seats": [{"seat": i, "name": f"p{i}", "connected": True, "bot": None if i == self.seat else "random"}
                          for i in range(self.players)],
                "deadline": None,
            },
            "view": json.loads(json.dumps(self.engine.view(self.state, self.seat))),
            "outcome": outcome.to_data() if outcome else None,
            "legal": self.legal(),
            "lastMove": self.last,
            "events": self.events,
            "names": [f"p{i}" for i in range(self.players)],
        }

    def act(self, text: str) -> dict[str, Any]:
        """The page's action: applied if legal, else the error the server would send."""
        self.sent.append(text)
        try:
            self._apply(self.seat, text)
            self.last_events = self.events
        except GameError as exc:
            return {"error": {"code": getattr(exc, "code", "illegal_action"), "message": str(exc)}}
        self.others_play()
        return {"ctx": self.ctx()}


async def open_board(page: Any, server: StaticServer, table: EngineTable) -> None:
    """Load the harness page and show the table's current position on it."""
    await page.route(f"{server.url}/harness.html",
                     lambda route: route.fulfill(body=PAGE, content_type="text/html"))
    await page.expose_function("pyAct", table.act)
    await page.goto(f"{server.url}/harness.html")
    await wait_until(page, "() => window.gtReady === true")
    table.others_play()
    await page.evaluate("(c) => window.gtShow(c)", table.ctx())
