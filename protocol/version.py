"""The wire protocol version negotiated by `hello`."""

from __future__ import annotations

from typing import Final

# Bump on any incompatible change to a message or the patch format. A server speaks every
# version in SUPPORTED_VERSIONS (chosen per connection by `hello`) and answers a hello
# carrying another number with the error "protocol_mismatch".
PROTOCOL_VERSION: Final[int] = 4
SUPPORTED_VERSIONS: Final[tuple[int, ...]] = (1, 2, 3, 4)
# Protocol 4 writes snapshots and patches as protocol 3 does; it only adds the `moved`
# advisory (docs/protocol.md), which a server sends to protocol-4 connections alone.
MOVED_SINCE: Final[int] = 4


def frame_version(protocol: int) -> int:
    """The version whose snapshot and patch format `protocol` uses (4 writes 3's): one
    encoding per format, whatever versions a room's members chose."""
    return min(protocol, 3)
