"""The error codes and the configuration error of the protocol core: one set of codes, one error type."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from strands_voice_protocol.chunker import IncrementalSentenceChunker
from strands_voice_protocol.errors import (
    AGENT_ERROR_CODES,
    TRANSPORT_ERROR_CODES,
    ConfigurationError,
    SageMakerStreamError,
    StrandsVoiceError,
    TransportErrorCode,
    TTSConnectionError,
    TTSTimeoutError,
)
from strands_voice_protocol.sse import SSEDecoder
from strands_voice_protocol.wire import BIDI_PATH, SAMPLE_RATE

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_transport_codes_are_one_literal_inside_the_agent_codes() -> None:
    assert TRANSPORT_ERROR_CODES == get_args(TransportErrorCode)
    assert TRANSPORT_ERROR_CODES == (
        "connection_failed",
        "connect_timeout",
        "connection_lost",
        "silence_timeout",
        "busy",
    )
    # Leg 3 reports a transport failure with the transport's code (one connection_lost for every transport).
    assert set(TRANSPORT_ERROR_CODES) < AGENT_ERROR_CODES
    assert AGENT_ERROR_CODES - set(TRANSPORT_ERROR_CODES) == {
        "agent_error",
        "invalid_request",
        "invalid_json",
    }
    # The codes each transport used to have of its own are gone from the set.
    assert not {"connection_dropped", "connection_closed", "closed"} & AGENT_ERROR_CODES


def test_every_transport_code_is_listed_in_the_docs() -> None:
    protocol = (DOCS / "PROTOCOL.md").read_text(encoding="utf-8")
    reliability = (DOCS / "reliability.md").read_text(encoding="utf-8")
    for code in AGENT_ERROR_CODES:
        assert f"`{code}`" in protocol, code
    for code in TRANSPORT_ERROR_CODES:
        assert f"`{code}`" in reliability, code


def test_transport_errors_carry_their_code() -> None:
    lost = TTSConnectionError("connection_lost", "dropped", "r-1", retryable=True)
    assert (lost.code, lost.request_id, lost.retryable, str(lost)) == (
        "connection_lost",
        "r-1",
        True,
        "connection_lost: dropped",
    )
    assert TTSTimeoutError("silence_timeout", "quiet").code == "silence_timeout"
    stream = SageMakerStreamError("busy", "throttled", retryable=True, error_type="ThrottlingException")
    assert isinstance(stream, TTSConnectionError) and stream.code == "busy"


def test_configuration_error_is_a_value_error_under_the_one_root() -> None:
    assert issubclass(ConfigurationError, StrandsVoiceError)
    assert issubclass(ConfigurationError, ValueError)


@pytest.mark.parametrize(
    "bad",
    [
        lambda: IncrementalSentenceChunker(max_chunk_chars=5),
        lambda: IncrementalSentenceChunker(first_chunk_min_chars=0),
        lambda: IncrementalSentenceChunker(first_chunk_max_chars=0),
        lambda: SSEDecoder(max_event_bytes=0),
    ],
    ids=["max_chunk_chars", "first_chunk_min_chars", "first_chunk_max_chars", "max_event_bytes"],
)
def test_bad_protocol_settings_raise_configuration_error(bad: object) -> None:
    assert callable(bad)
    with pytest.raises(ConfigurationError):
        bad()


def test_wire_constants() -> None:
    assert BIDI_PATH == "/invocations-bidirectional-stream"
    assert SAMPLE_RATE == 24_000
