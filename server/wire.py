"""The server's seam onto `protocol/`: the few names the server uses, in one place."""

from __future__ import annotations

from protocol import (
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    ProtocolError,
    apply_patch,
    closing_frame,
    compact_ops,
    compact_patch_frame,
    decode_client,
    diff,
    diff_compact,
    diff_view,
    encode,
    key_refs,
    key_table,
    legal_edit_joined,
    patch_body,
    patch_bytes,
    patch_frame,
    patch_head,
    snapshot_frame,
)
from protocol.version import MOVED_SINCE, frame_version

__all__ = [
    "MOVED_SINCE",
    "PROTOCOL_VERSION",
    "SUPPORTED_VERSIONS",
    "ProtocolError",
    "apply_patch",
    "closing_frame",
    "compact_ops",
    "compact_patch_frame",
    "decode_client",
    "diff",
    "diff_compact",
    "diff_view",
    "encode",
    "frame_version",
    "key_refs",
    "key_table",
    "legal_edit_joined",
    "patch_body",
    "patch_bytes",
    "patch_frame",
    "patch_head",
    "snapshot_frame",
]
