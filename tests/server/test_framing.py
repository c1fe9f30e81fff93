"""The server frames its own outbound binary messages (server.connection.push):
the bytes must be exactly what websockets would have written, at every length
boundary of RFC 6455's payload-length encoding, and a real client must read them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from websockets.frames import Frame, Opcode

from server.connection import binary_header

BOUNDARIES = [0, 1, 125, 126, 127, 65535, 65536, 65537]


@pytest.mark.parametrize("size", BOUNDARIES)
def test_header_matches_websockets_at_length_boundaries(size: int) -> None:
    payload = bytes(size)
    expected = Frame(Opcode.BINARY, payload).serialize(mask=False, extensions=[])
    assert binary_header(size) + payload == expected


@given(st.binary(max_size=70_000))
def test_header_matches_websockets_for_any_payload(payload: bytes) -> None:
    expected = Frame(Opcode.BINARY, payload).serialize(mask=False, extensions=[])
    assert binary_header(len(payload)) + payload == expected
