"""`PlayApp`: the interactive Textual client for `giants play` and `giants watch`.

One screen: the board (the room drawn by `client_cli.render`, or the lobby) in a
scrolling pane, a status line for replies and errors, and a command line. Type a
move in the game's notation or a /command; the board redraws whenever the server
sends a snapshot or patch. Tested with Textual's pilot (tests/client_cli/test_play.py).
"""

from __future__ import annotations

from typing import ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.suggester import Suggester
from textual.widgets import Footer, Header, Input, Static

from client_cli.client import Client, SeatStore
from client_cli.tui.session import PlaySession, Reply


class LegalMoveSuggester(Suggester):
    """Completes a half-typed move from the seat's current legal moves (tab accepts)."""

    def __init__(self, app: PlayApp) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.play_app = app

    async def get_suggestion(self, value: str) -> str | None:
        session = self.play_app.session
        room = session.room if session is not None else None
        if room is None or not value or value.startswith("/"):
            return None
        return next((move for move in room.legal if move.startswith(value) and move != value), None)


class PlayApp(App[None]):
    """The terminal client. `start` is a list of commands run once connected
    (e.g. ["/join abc123 1"]); `watch_only` hides nothing but says so in the title."""

    TITLE = "Giants Table"
    CSS = """
    #board-pane { height: 1fr; border: round $primary; }
    #board { width: auto; }
    #status { height: auto; max-height: 8; padding: 0 1; }
    #status.error { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "refresh_rooms", "Rooms"),
        Binding("ctrl+l", "show_moves", "Legal moves"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(
        self, url: str, *, name: str | None = None, start: list[str] | None = None, seats: SeatStore | None = None
    ) -> None:
        super().__init__()
        self.url = url
        self.seats = seats  # the per-user seat file (giants play passes SeatStore.default())
        self.player_name = name
        self.start_commands = list(start or [])
        self.client: Client | None = None
        self.session: PlaySession | None = None
        self.last_reply = Reply("")

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="board-pane"):
            # markup=False: boards and server messages contain [brackets] (error codes).
            yield Static("connecting...", id="board", markup=False)
        yield Static("", id="status", markup=False)
        yield Input(placeholder="a move, or /help", id="command", suggester=LegalMoveSuggester(self))
        yield Footer()

    async def on_mount(self) -> None:
        self.sub_title = self.url
        self.query_one("#command", Input).focus()
        self.connect_and_follow()
        self.set_interval(1.0, self.tick)

    def tick(self) -> None:
        """Once a second: redraw while a move deadline runs, so its countdown moves."""
        room = self.session.room if self.session is not None else None
        if room is not None and room.info.get("deadline"):
            self.redraw()

    @work(exclusive=True, group="connection")
    async def connect_and_follow(self) -> None:
        """Connect, run the start commands, then redraw on every room update."""
        client = Client(self.url, name=self.player_name, seats=self.seats)
        try:
            await client.connect()
        except Exception as exc:  # shown to the user, who can quit
            self.show_reply(Reply(f"cannot connect to {self.url}: {exc}", error=True))
            return
        self.client = client
        self.session = PlaySession(client)
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
        event.input.value = ""
        await self.run_line(event.value)

    async def run_line(self, line: str) -> None:
        if self.session is None:
            self.show_reply(Reply("not connected yet", error=True))
            return
        reply = await self.session.handle(line)
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
        if self.session is None:
            return
        self.query_one("#board", Static).update(self.session.screen())
        room = self.session.room
        if room is not None and room.view is not None:
            info = room.info
            turn = "your turn" if room.legal else ("finished" if room.finished else "waiting")
            self.title = f"{info.get('game')} - room {room.id} - {turn}"
        else:
            self.title = "Giants Table - lobby"

    def board_text(self) -> str:
        """What the board pane shows now (for tests and screenshots)."""
        return self.session.screen() if self.session is not None else ""

    async def action_refresh_rooms(self) -> None:
        await self.run_line("/rooms")

    async def action_show_moves(self) -> None:
        await self.run_line("/moves")
