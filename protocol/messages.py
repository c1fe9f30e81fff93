"""Pydantic models of every message, one discriminated union per direction.

Client -> server models are strict: no coercion between str, int, bool and bytes, no
unknown fields, bounded string and collection sizes. They are what `codec.decode_client`
returns, so a server handler reads typed attributes and never re-checks a field.

Server -> client models are lenient on extra fields (a newer server may add some) and
carry views, events and ops as plain data: the view schema belongs to each engine.
Server code on the hot path need not build these models at all: `codec.encode` packs a
plain dict of the same shape (see the helpers at the end of `codec`).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    model_validator,
)

# -- bounded field types -------------------------------------------------------------

MAX_ID_LEN = 64
MAX_NAME_LEN = 64
MAX_ROOM_LEN = 64
MAX_TOKEN_LEN = 128
MAX_PASSWORD_LEN = 128
MAX_ACTION_LEN = 1024
MAX_OPTIONS = 32
MAX_OPTION_STR_LEN = 256
MAX_KEYS = 4096  # entries of a snapshot's key table (protocol 2)
MAX_SEATS = 64  # seat numbers are 0 .. MAX_SEATS - 1
MAX_DEADLINE = 86_400.0  # seconds per move (one day)
MAX_CURSOR_LEN = 128
DEFAULT_LIST_LIMIT = 50  # rooms per list_rooms page when the request names no limit
MAX_LIST_LIMIT = 200
# Room ids are letters, digits, "-" and "_": never a ":" or anything else that could
# name another key when an id is put into a storage key.
ROOM_ID_PATTERN = r"^[A-Za-z0-9_-]+$"
_ROOM_ID_RE = re.compile(ROOM_ID_PATTERN)


def is_room_id(text: str) -> bool:
    """Whether `text` could name a room at all. Servers check it before building any
    storage key from an id, so no text names another kind of key (e.g. "<id>:log")."""
    return 0 < len(text) <= MAX_ROOM_LEN and _ROOM_ID_RE.fullmatch(text) is not None

# Bidirectional formatting characters (category Cf, listed for the error message's
# sake): they reorder how the text *around* a name is displayed.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _display_safe(text: str) -> str:
    """Refuse text that would corrupt what others display: control characters
    (C0, C1, DEL), format characters (bidi overrides, zero-width marks), surrogates,
    private-use and unassigned code points, line and paragraph separators."""
    for ch in text:
        category = unicodedata.category(ch)
        if category[0] == "C" or category in ("Zl", "Zp"):
            kind = "a bidirectional override" if ch in _BIDI else "a control or invisible character"
            raise ValueError(f"contains {kind} (U+{ord(ch):04X}); use printable characters only")
    if text != text.strip():
        raise ValueError("has leading or trailing spaces")
    return text


Str64 = Annotated[str, StringConstraints(max_length=64)]
# A name others see (player names, bot specs): printable text only.
Name = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_NAME_LEN), AfterValidator(_display_safe)
]
RoomId = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_ROOM_LEN, pattern=ROOM_ID_PATTERN)
]
Cursor = Annotated[str, StringConstraints(min_length=1, max_length=MAX_CURSOR_LEN)]
Token = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TOKEN_LEN)]
Password = Annotated[str, StringConstraints(max_length=MAX_PASSWORD_LEN)]
ActionText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ACTION_LEN)]
GameName = Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME_LEN)]
Seat = Annotated[int, Field(ge=0, lt=MAX_SEATS)]
SeatKey = Annotated[str, StringConstraints(pattern=r"^[0-9]{1,2}$")]
# int64 range: what every msgpack implementation round-trips.
RequestIdInt = Annotated[int, Field(ge=-(2**63), lt=2**63)]
RequestId: TypeAlias = RequestIdInt | Annotated[str, StringConstraints(max_length=MAX_ID_LEN)]
OptionValue = (
    bool | int | float | Annotated[str, StringConstraints(max_length=MAX_OPTION_STR_LEN)] | None
)
Options = Annotated[dict[Str64, OptionValue], Field(max_length=MAX_OPTIONS)]
Bots = Annotated[dict[SeatKey, Name], Field(max_length=MAX_SEATS)]
Op: TypeAlias = list[Any]
# A client-chosen request key (128 random bits, e.g. 22+ url-safe characters): the same
# key on a retried create_room / join / start makes the retry safe (docs/protocol.md).
RequestKey = Annotated[str, StringConstraints(min_length=16, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


class _Request(BaseModel):
    """Common base of client requests: strict, closed, immutable, with an id."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    id: RequestId


# -- client -> server ------------------------------------------------------------------


class Hello(_Request):
    """First request on a connection: negotiates the protocol version, opens a session."""

    type: Literal["hello"] = "hello"
    protocol: int
    name: Name | None = None
    client: Annotated[str, StringConstraints(max_length=128)] | None = None


class ListRooms(_Request):
    """One page of the lobby listing, optionally of one game; finished rooms only
    when asked. `cursor` is the `next` of the previous page (absent: the first page)."""

    type: Literal["list_rooms"] = "list_rooms"
    game: GameName | None = None
    include_finished: bool = False
    limit: Annotated[int, Field(ge=1, le=MAX_LIST_LIMIT)] | None = None
    cursor: Cursor | None = None


class CreateRoom(_Request):
    """Create a room; `bots` maps a seat number (as a string) to a bundled bot name."""

    type: Literal["create_room"] = "create_room"
    game: GameName
    rules: GameName | None = None
    players: Annotated[int, Field(ge=1, le=MAX_SEATS)] | None = None
    options: Options | None = None
    private: bool = False
    password: Password | None = None
    bots: Bots | None = None
    deadline: Annotated[float, Field(ge=0, le=MAX_DEADLINE)] | None = None  # 0 = none
    autostart: bool = True
    key: RequestKey | None = None


class Join(_Request):
    """Take a seat (the first free one if `seat` is omitted); the reply carries a token."""

    type: Literal["join"] = "join"
    room: RoomId
    seat: Seat | None = None
    password: Password | None = None
    key: RequestKey | None = None


class Watch(_Request):
    """Follow a room as a spectator (spectator view, no token)."""

    type: Literal["watch"] = "watch"
    room: RoomId
    password: Password | None = None


class Resume(_Request):
    """Take back a seat on any connection with the token that `join` returned."""

    type: Literal["resume"] = "resume"
    room: RoomId
    token: Token


class Leave(_Request):
    type: Literal["leave"] = "leave"
    room: RoomId


class Start(_Request):
    type: Literal["start"] = "start"
    room: RoomId
    key: RequestKey | None = None


class Act(_Request):
    """Play `action` (game notation); `version` makes a stale client fail with stale_version."""

    type: Literal["act"] = "act"
    room: RoomId
    action: ActionText
    version: Annotated[int, Field(ge=0)] | None = None


class Resync(_Request):
    """Ask for a fresh snapshot after a version gap or a patch that does not apply."""

    type: Literal["resync"] = "resync"
    room: RoomId


class Replay(_Request):
    """The action log of a finished room; with `positions`, the table's view at each move."""

    type: Literal["replay"] = "replay"
    room: RoomId
    positions: bool = False  # also the spectator view at every move (replay viewers)
    password: Password | None = None  # a password room's replay needs it


class Resign(_Request):
    """Give up a game in progress: every other seat shares the win."""

    type: Literal["resign"] = "resign"
    room: RoomId


class Abort(_Request):
    """End a game without a result, while fewer actions than seats have been played."""

    type: Literal["abort"] = "abort"
    room: RoomId


class OfferDraw(_Request):
    """Offer a draw, or accept the opponent's standing offer (two-player games)."""

    type: Literal["offer_draw"] = "offer_draw"
    room: RoomId


class DeclineDraw(_Request):
    """Decline the opponent's draw offer, or withdraw your own."""

    type: Literal["decline_draw"] = "decline_draw"
    room: RoomId


class Ping(_Request):
    type: Literal["ping"] = "ping"


ClientMessage: TypeAlias = Annotated[
    Hello
    | ListRooms
    | CreateRoom
    | Join
    | Watch
    | Resume
    | Leave
    | Start
    | Act
    | Resync
    | Replay
    | Resign
    | Abort
    | OfferDraw
    | DeclineDraw
    | Ping,
    Field(discriminator="type"),
]

CLIENT_MESSAGE_TYPES: dict[str, type[_Request]] = {
    cls.model_fields["type"].default: cls
    for cls in (
        Hello,
        ListRooms,
        CreateRoom,
        Join,
        Watch,
        Resume,
        Leave,
        Start,
        Act,
        Resync,
        Replay,
        Resign,
        Abort,
        OfferDraw,
        DeclineDraw,
        Ping,
    )
}
client_adapter: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)


# -- server -> client ------------------------------------------------------------------


class _Push(BaseModel):
    """Common base of server messages: tolerant of fields a newer server adds."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class Ok(_Push):
    """The success reply to request `id`; `data` depends on the request type."""

    type: Literal["ok"] = "ok"
    id: int | str | None
    data: dict[str, Any] = Field(default_factory=dict)


class Error(_Push):
    """The failure reply to request `id` (None if the frame had no readable id)."""

    type: Literal["error"] = "error"
    id: int | str | None
    code: str
    message: str
    detail: dict[str, Any] | None = None


class Snapshot(_Push):
    """The full view of `room` at `version`; `legal` is non-empty only when this seat must act.

    `keys` (protocol 2 and 3) is the room's key table: keep it with the view and read
    the room's patches with it (`protocol.compact.expand_ops`). None under protocol 1.
    """

    type: Literal["snapshot"] = "snapshot"
    room: str
    version: int
    seat: int | None
    view: dict[str, Any]
    legal: list[str] = Field(default_factory=list)
    keys: Annotated[list[str], Field(max_length=MAX_KEYS)] | None = None


class Patch(_Push):
    """Ops turning the view at version `from_` (wire name "from") into version `to`.

    Both protocol versions decode to this shape: a protocol-2 patch gets `to = from + 1`
    and its `act` back as the leading `action` event. Its `ops` stay in the compact form
    (`protocol.compact`) until expanded with the room's key table. `legal` is None when
    a protocol-2 or -3 patch left it out: the seat's legal list is unchanged, unless
    `legal_edit` (protocol 3, `protocol.legal`) edits the seat's last non-empty list.
    """

    type: Literal["patch"] = "patch"
    room: str
    from_: int = Field(alias="from")
    to: int
    ops: list[Any]
    events: list[dict[str, Any]] = Field(default_factory=list)
    legal: list[str] | None = None
    legal_edit: list[list[Any]] | None = None

    @model_validator(mode="before")
    @classmethod
    def _compact(cls, data: Any) -> Any:
        # Protocol 2 leaves out `to` (always from + 1) and sends the action event as `act`.
        if not isinstance(data, dict) or ("to" in data and "act" not in data):
            if isinstance(data, dict) and "legal" not in data:
                data = {**data, "legal": []}  # protocol 1: absent means empty
            return data
        data = dict(data)
        start = data.get("from", data.get("from_"))
        if "to" not in data and type(start) is int:
            data["to"] = start + 1
        act = data.pop("act", None)
        if act is not None:
            if type(act) is not list or len(act) != 2:
                raise ValueError("act must be [seat, action]")
            events = data.get("events") or []
            if type(events) is not list:
                raise ValueError("events must be a list")
            data["events"] = [{"type": "action", "seat": act[0], "action": act[1]}, *events]
        return data


class Closing(_Push):
    """The server is shutting down; a close frame (1001) follows. Reconnect later."""

    type: Literal["closing"] = "closing"
    reason: str = ""


class Moved(_Push):
    """Protocol 4, advisory: `room` is served by another worker of the server this
    connection reached; reconnect naming it (`?room=<room>`), take back every room
    there, then close this connection. Ignoring it is fine (the relay serves you)."""

    type: Literal["moved"] = "moved"
    room: str


ServerMessage: TypeAlias = Annotated[
    Ok | Error | Snapshot | Patch | Closing | Moved, Field(discriminator="type")
]

SERVER_MESSAGE_TYPES: dict[str, type[_Push]] = {
    cls.model_fields["type"].default: cls for cls in (Ok, Error, Snapshot, Patch, Closing, Moved)
}
server_adapter: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)

# Public names of the two bases, for code that handles any request or any server message.
Request = _Request
ServerPush = _Push
AnyMessage: TypeAlias = _Request | _Push


def to_wire(message: BaseModel) -> dict[str, Any]:
    """The plain map a model is sent as: wire names, optional request fields left out.

    Optional request fields that are None are omitted (absent means "not given");
    server messages keep their nulls (an error's id and a spectator snapshot's seat are
    meaningful nulls), except an error's absent detail.
    """
    if isinstance(message, _Request):
        return message.model_dump(by_alias=True, exclude_none=True)
    data = message.model_dump(by_alias=True)
    if isinstance(message, Error) and message.detail is None:
        del data["detail"]
    return data
