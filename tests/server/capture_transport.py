"""A transport that keeps what is written: a commit pipe's (`server.commit_pipe`) in
tests that check the bytes a store sends, without a socket."""

from __future__ import annotations


class CaptureTransport:
    """Keeps every write in `written`; never closing."""

    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass
