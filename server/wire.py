"""The server's seam onto `protocol/`: the few names the server uses, in one place."""

from __future__ import annotations

from protocol import (
    PROTOCOL_VERSION,
    ProtocolError,
    apply_patch,
    closing_frame,
    decode_client,
    diff,
    encode,
    patch_frame,
    snapshot_frame,
)

__all__ = [
    "PROTOCOL_VERSION",
    "ProtocolError",
    "apply_patch",
    "closing_frame",
    "decode_client",
    "diff",
    "encode",
    "patch_frame",
    "snapshot_frame",
]
