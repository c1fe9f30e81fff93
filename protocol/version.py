"""The wire protocol version negotiated by `hello`."""

from __future__ import annotations

from typing import Final

# Bump on any incompatible change to a message or the patch format; a server answers a
# hello carrying another number with the error "protocol_mismatch".
PROTOCOL_VERSION: Final[int] = 1
