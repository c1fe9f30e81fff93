"""`PlayApp`: the interactive Textual client for `giants play` and `giants watch`.

One screen: the board (the room drawn by `client_cli.render`, the lobby, a replay, or
help / the move list) in a scrolling pane, the move browser beside it (every legal
move, grouped by kind, filtered by what is typed), a status line for replies and
errors, and a command line with history (Up/Down) and completion (Tab). The sub-title
says whether the connection is up or being re-established. The board redraws whenever
the server sends a snapshot or patch. Tested with Textual's pilot
(tests/client_cli/test_play.py, test_tui.py).
"""

from __future__ import annotations

import os
from typing import ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.css.query import NoMatches
from textual.suggester import Suggester
from textual.widgets import Footer, Header, Input, Static

from client_cli.client import Client, SeatStore
from client_cli.tui.fit import fit
from client_cli.tui.session import PlaySession, Reply, group_moves


def matching(legal: list[str], typed: str) -> list[str]:
    """The legal moves that fit what is typed: a prefix, or every word as a substring."""
    typed = typed.strip()
    if not typed or typed.startswith("/"):
        return list(legal)
    prefix = [m for m in legal if m.startswith(typed)]
    if prefix:
        return prefix
    words = typed.lower().split()
    return [m for m in legal if all(w in m.lower() for w in words)]


def completion(legal: list[str], typed: str) -> str | None:
    """What Tab turns `typed` into: the longest common start of the matching moves."""
    found = [m for m in legal if m.startswith(typed)] if typed else []
    if not found:
        return None
    common = os.path.commonprefix(found)  # noqa: RUF071 - characters, not paths
    return common if len(common) > len(typed) else None


class LegalMoveSuggester(Suggester):
    """Completes a half-typed move from the seat's current legal moves (Tab accepts)."""

    def __init__(self, app: PlayApp) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.play_app = app

    async def get_suggestion(self, value: str) -> str | None:
        session = self.play_app.session
        room = session.room if session is not None else None
        if room is None or not value or value.startswith("/"):
            return None
        return next((move for move in room.legal if move.startswith(value) and move != value), None)


class CommandInput(Input):
    """The command line: Up/Down walk through earlier lines, Tab completes a move."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "history(-1)", "Previous line", show=False),
        Binding("down", "history(1)", "Next line", show=False),
        Binding("tab", "complete", "Complete", show=False, priority=True),
    ]

    def __init__(self, play_app: PlayApp, *, placeholder: str, id: str, suggester: Suggester) -> None:
        super().__init__(placeholder=placeholder, id=id, suggester=suggester)
        self.play_app = play_app
        self.history: list[str] = []
        self.history_at = 0

    def remember(self, line: str) -> None:
        if line.strip() and (not self.history or self.history[-1] != line):
            self.history.append(line)
        self.history_at = len(self.history)

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        self.history_at = max(0, min(len(self.history), self.history_at + step))
        self.value = self.history[self.history_at] if self.history_at < len(self.history) else ""
        self.cursor_position = len(self.value)

    def action_complete(self) -> None:
        session = self.play_app.session
        room = session.room if session is not None else None
        if room is None or not room.legal:
            return
        found = matching(room.legal, self.value)
        better = completion(room.legal, self.value) or (found[0] if len(found) == 1 else None)
        if better is not None:
            self.value = better
            self.cursor_position = len(better)


class BoardPane(VerticalScroll):
    """The scrolling board pane: when its width changes (window resized, move browser
    shown or hidden) the screen is fitted to it again."""

    def on_resize(self) -> None:
        app = self.app
        if isinstance(app, PlayApp):
            app.redraw()


class PlayApp(App[None]):
    """The terminal client. `start` is a list of commands run once connected
    (e.g. ["/join abc123 1"]); `seats` is the per-user seat file (`giants play`
    passes SeatStore.default())."""

    TITLE = "Giants Table"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    #main { height: 1fr; }
    #board-pane { width: 1fr; border: round $primary; overflow-x: auto; }
    #board { width: auto; text-wrap: nowrap; }
    #moves-pane { width: 38; border: round $secondary; display: none; }
    #moves-pane.shown { display: block; }
    #status { height: auto; max-height: 8; padding: 0 1; }
    #status.error { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "refresh_rooms", "Rooms"),
        Binding("ctrl+l", "show_moves", "Legal moves"),
        Binding("f1", "help", "Help"),
        Binding("f7", "step('prev')", "Replay back"),
        Binding("f8", "step('next')", "Replay on"),
        Binding("escape", "close_panel", "Close", show=False),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(
        self, url: str, *, name: str | None = None, start: list[str] | None = None, seats: SeatStore | None = None,
        room: str | None = None,
    ) -> None:
        super().__init__()
        self.url = url
        self.room_hint = room  # the room the start commands join, if any: the connection's routing hint
        self.player_name = name
        self.start_commands = list(start or [])
        self.seats = seats
        self.client: Client | None = None
        self.session: PlaySession | None = None
        self.last_reply = Reply("")
        self.link = "connecting"

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            with BoardPane(id="board-pane"):
                # markup=False: boards and server messages contain [brackets] (error codes).
                yield Static("connecting...", id="board", markup=False)
            with VerticalScroll(id="moves-pane"):
                yield Static("", id="moves", markup=False)
        yield Static("", id="status", markup=False)
        yield CommandInput(self, placeholder="a move, or /help (Tab completes, Up/Down history)",
                           id="command", suggester=LegalMoveSuggester(self))
        yield Footer()

    async def on_mount(self) -> None:
        self.sub_title = f"{self.url} - connecting"
        self.query_one("#command", Input).focus()
        self.connect_and_follow()
        self.set_interval(1.0, self.tick)

    def tick(self) -> None:
        """Once a second: the connection indicator, and a running deadline's countdown."""
        client = self.client
        if client is not None:
            link = "connected" if client.connected else "reconnecting..."
            if link != self.link:
                self.link = link
                self.sub_title = f"{client.url} - {link}"
        room = self.session.room if self.session is not None else None
        if room is not None and room.info.get("deadline"):
            self.redraw()

    @work(exclusive=True, group="connection")
    async def connect_and_follow(self) -> None:
        """Connect, run the start commands, then redraw on every room update."""
        client = Client(self.url, name=self.player_name, seats=self.seats, room=self.room_hint)
        try:
            await client.connect()
        except Exception as exc:  # shown to the user, who can quit
            self.link = "not connected"
            self.sub_title = f"{client.url} - not connected"
            self.show_reply(Reply(f"cannot connect to {self.url}: {exc}", error=True))
            return
        self.client = client
        self.session = PlaySession(client)
        self.tick()
        await self.session.handle("/rooms")
        self.redraw()
        for line in self.start_commands:
            await self.run_line(line)
        async for _update in client.updates():
            self.redraw()

    async def on_unmount(self) -> None:
        if self.client is not None:
            await self.client.close()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        command = self.query_one("#command", CommandInput)
        command.remember(event.value)
        event.input.value = ""
        await self.run_line(event.value)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.redraw_moves()

    async def run_line(self, line: str) -> None:
        if self.session is None:
            self.show_reply(Reply("not connected yet", error=True))
            return
        reply = await self.session.handle(line)
        if reply.panel:
            first = reply.text.splitlines()[0] if reply.text else ""
            self.show_reply(Reply(f"{first} (in the board pane; Esc closes)"))
            self.last_reply = reply
        else:
            self.show_reply(reply)
        self.redraw()
        if reply.quit:
            self.exit()

    def show_reply(self, reply: Reply) -> None:
        self.last_reply = reply
        status = self.query_one("#status", Static)
        status.update(reply.text)
        status.set_class(reply.error, "error")

    def redraw(self) -> None:
        """Draw the screen again; a no-op while the widgets are not there (before the
        first layout, or while the app is closing and an update still arrives)."""
        try:
            self._redraw()
        except NoMatches:
            return

    def _redraw(self) -> None:
        if self.session is None:
            return
        # Prose is wrapped to the pane; boards are never wrapped (the pane scrolls sideways).
        pane = self.query_one("#board-pane")
        width = pane.scrollable_content_region.width or 80
        self.query_one("#board", Static).update(fit(self.session.screen(width), width))
        room = self.session.room
        if room is not None and room.view is not None:
            info = room.info
            status = str(info.get("status", "?"))
            if room.finished:
                turn = "finished"
            elif room.seat is None:
                turn = f"watching - {status}"
            elif room.legal and room.seat not in (info.get("answered") or []):
                turn = "your turn"
            else:
                turn = "waiting" if status == "waiting" else "their turn"
            self.title = f"{info.get('game')} - room {room.id} - {turn}"
        elif self.session.replay is not None:
            self.title = "Giants Table - replay"
        else:
            self.title = "Giants Table - lobby"
        self.redraw_moves()

    def redraw_moves(self) -> None:
        """The move browser: the legal moves that fit the command line, by kind."""
        pane = self.query_one("#moves-pane")
        room = self.session.room if self.session is not None else None
        legal = room.legal if room is not None else []
        pane.set_class(bool(legal), "shown")
        if not legal:
            return
        typed = self.query_one("#command", Input).value
        found = matching(legal, typed)
        lines = [f"{len(found)} of {len(legal)} moves" + (" (Tab completes)" if typed else "")]
        for kind, moves in group_moves(found).items():
            lines += ["", f"{kind} ({len(moves)})", *(f"  {m}" for m in moves)]
        self.query_one("#moves", Static).update("\n".join(lines))

    def board_text(self) -> str:
        """What the board pane shows now (for tests and screenshots)."""
        return self.session.screen() if self.session is not None else ""

    def moves_text(self) -> str:
        """What the move browser shows now (for tests)."""
        return str(self.query_one("#moves", Static).content)

    async def action_refresh_rooms(self) -> None:
        await self.run_line("/rooms")

    async def action_show_moves(self) -> None:
        await self.run_line("/moves")

    async def action_help(self) -> None:
        await self.run_line("/help")

    async def action_step(self, direction: str) -> None:
        await self.run_line(f"/{direction}")

    def action_close_panel(self) -> None:
        if self.session is not None and self.session.panel is not None:
            self.session.panel = None
            self.redraw()
