"""A client's request id is bounded visible ASCII at every Leg 1 door: the endpoint puts it in an HTTP
header and a log line as it is."""

from __future__ import annotations

import json

import pytest
from strands_voice_protocol.errors import FrameDecodeError
from strands_voice_protocol.frames import Cancel, Synthesize, decode_client_message
from strands_voice_protocol.limits import MAX_REQUEST_ID_CHARS


@pytest.mark.parametrize("request_id", ["a1b2c3d4-0", "a1b2c3d4-12~3", "!~", "x" * MAX_REQUEST_ID_CHARS])
def test_the_ids_clients_send_are_read(request_id: str) -> None:
    decoded = decode_client_message(json.dumps({"text": "Hi.", "request_id": request_id}))
    assert isinstance(decoded, Synthesize) and decoded.request_id == request_id
    assert decode_client_message(json.dumps({"type": "cancel", "request_id": request_id})) == Cancel(
        request_id
    )


@pytest.mark.parametrize(
    "request_id",
    ["\u20ac1", "caf\u00e9", "a\nb", "a\r\nX-Forged: 1", "a b", "\t", "", "x" * (MAX_REQUEST_ID_CHARS + 1)],
)
def test_any_other_id_is_an_invalid_request(request_id: str) -> None:
    for message in ({"text": "Hi.", "request_id": request_id}, {"type": "cancel", "request_id": request_id}):
        with pytest.raises(FrameDecodeError) as refused:
            decode_client_message(json.dumps(message))
        assert refused.value.code == "invalid_request" and "request_id" in refused.value.message
