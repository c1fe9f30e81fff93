"""The wire protocol version negotiated by `hello`."""

from __future__ import annotations

from typing import Final

# Bump on any incompatible change to a message or the patch format. A server speaks every
# version in SUPPORTED_VERSIONS (chosen per connection by `hello`) and answers a hello
# carrying another number with the error "protocol_mismatch".
PROTOCOL_VERSION: Final[int] = 3
SUPPORTED_VERSIONS: Final[tuple[int, ...]] = (1, 2, 3)
