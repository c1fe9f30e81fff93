"""Stable error codes and the protocol's exception tree.

Every `error` frame carries one `ErrorCode` value in its "code" field. The strings are
part of the wire contract: clients and bots in other languages switch on them, so a
member is never renamed or removed, only added.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Every stable error code that can appear in an `error` frame."""

    # frame and message level (raised by protocol.codec)
    BAD_FRAME = "bad_frame"  # not msgpack, trailing bytes, or not a map
    FRAME_TOO_LARGE = "frame_too_large"
    BAD_MESSAGE = "bad_message"  # validation failed; detail["fields"] lists the problems
    UNKNOWN_TYPE = "unknown_type"
    # session and lobby (raised by the server)
    PROTOCOL_MISMATCH = "protocol_mismatch"
    HELLO_REQUIRED = "hello_required"
    RATE_LIMITED = "rate_limited"
    SERVER_FULL = "server_full"  # create_room: the node holds as many rooms as it may
    QUOTA_EXCEEDED = "quota_exceeded"  # create_room: your address has its most open rooms
    NO_SUCH_ROOM = "no_such_room"
    ROOM_FULL = "room_full"
    SEAT_TAKEN = "seat_taken"
    BAD_PASSWORD = "bad_password"
    BAD_TOKEN = "bad_token"
    NOT_IN_ROOM = "not_in_room"
    NOT_SEATED = "not_seated"
    NOT_STARTED = "not_started"
    ALREADY_STARTED = "already_started"
    STALE_VERSION = "stale_version"
    NOT_FINISHED = "not_finished"
    INTERNAL_ERROR = "internal_error"
    SHUTTING_DOWN = "shutting_down"
    ABORT_TOO_LATE = "abort_too_late"  # the game is past its first moves: resign instead
    DRAW_NOT_ALLOWED = "draw_not_allowed"  # not a two-player game, or you already offered
    NO_DRAW_OFFER = "no_draw_offer"  # decline_draw with no offer standing
    # storage could not be reached; detail["outcome"] says whether the change is in:
    # "not_applied" (the room is unchanged) or "unknown" (resync before deciding)
    STORAGE_UNAVAILABLE = "storage_unavailable"
    TOO_MANY_GUESSES = "too_many_guesses"  # wrong room passwords: wait detail["retry_after"] s
    TOO_MANY_CHANGES = "too_many_changes"  # a seat replaced its action too often in one step
    # engine codes (engines.base.GameError.code)
    UNKNOWN_GAME = "unknown_game"
    UNKNOWN_RULES = "unknown_rules"
    BAD_OPTIONS = "bad_options"
    BAD_NOTATION = "bad_notation"
    ILLEGAL_ACTION = "illegal_action"
    NOT_YOUR_TURN = "not_your_turn"
    GAME_OVER = "game_over"


class ProtocolError(Exception):
    """Base of every protocol failure: a stable `code`, a human `message`, a `detail` map.

    `id` is the request id recovered from the offending frame (None when unreadable);
    a server answers with `error_frame(exc)` so the client can match the reply.
    """

    default_code: ErrorCode = ErrorCode.BAD_MESSAGE

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | None = None,
        detail: dict[str, Any] | None = None,
        id: int | str | None = None,
    ) -> None:
        super().__init__(message)
        self.code: ErrorCode = code or self.default_code
        self.message = message
        self.detail = detail
        self.id = id

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code.value!r}, {self.message!r})"


class FrameTooLarge(ProtocolError):
    """The frame exceeds the size limit; it was not decoded, so `id` is None."""

    default_code = ErrorCode.FRAME_TOO_LARGE


class BadFrame(ProtocolError):
    """The bytes are not exactly one msgpack map (garbage, trailing bytes, an array...)."""

    default_code = ErrorCode.BAD_FRAME


class UnknownType(ProtocolError):
    """The map's "type" names no message of this direction; detail["type"] echoes it."""

    default_code = ErrorCode.UNKNOWN_TYPE


class BadMessage(ProtocolError):
    """A known message type failed validation; detail["fields"] says which field and why."""

    default_code = ErrorCode.BAD_MESSAGE


class PatchError(ProtocolError):
    """A patch op does not fit the view it is applied to: the receiver must resync."""

    default_code = ErrorCode.BAD_MESSAGE
