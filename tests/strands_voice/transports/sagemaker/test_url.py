"""sagemaker:// URLs, endpoint defaults and the payload-part rules (no network, no SDK calls)."""

from __future__ import annotations

import pytest

from strands_voice.transports._url import transport_from_url
from strands_voice.transports.sagemaker import SageMakerTransport
from strands_voice.transports.sagemaker._framing import (
    PartAssembler,
    classify_payload_part,
    default_endpoint_uri,
)


def test_sagemaker_url_with_every_option() -> None:
    transport = SageMakerTransport.from_url(
        "sagemaker://kokoro-tts?region=eu-central-1&variant=blue&endpoint_url=https://localhost:8443",
        connect_timeout=3.0,
    )
    assert transport.target.endpoint_name == "kokoro-tts"
    assert transport.target.region == "eu-central-1"
    assert transport.target.target_variant == "blue"
    assert transport.target.endpoint_uri == "https://localhost:8443"
    assert transport.connect_timeout == 3.0


def test_sagemaker_url_minimal_leaves_region_to_the_environment() -> None:
    transport = SageMakerTransport.from_url("sagemaker://kokoro-tts")
    assert (transport.target.region, transport.target.target_variant, transport.target.endpoint_uri) == (
        None,
        None,
        None,
    )


def test_sagemaker_url_through_transport_from_url() -> None:
    transport = transport_from_url("sagemaker://kokoro-tts?region=us-west-2")
    assert isinstance(transport, SageMakerTransport)
    assert transport.target.region == "us-west-2"


@pytest.mark.parametrize(
    "url",
    [
        "sagemaker://",
        "sagemaker://kokoro-tts/extra/path",
        "sagemaker://kokoro_tts",  # underscores are not allowed in endpoint names
        "sagemaker://-kokoro",
        "sagemaker://" + "a" * 64,
        "sagemaker://kokoro-tts?regoin=us-east-1",  # a typo must not be ignored
        "ws://kokoro-tts",
    ],
)
def test_sagemaker_bad_urls_are_rejected(url: str) -> None:
    with pytest.raises(ValueError):
        SageMakerTransport.from_url(url)


def test_sagemaker_default_endpoints() -> None:
    assert default_endpoint_uri("us-east-1") == "https://runtime.sagemaker.us-east-1.amazonaws.com:8443"
    assert default_endpoint_uri("cn-north-1") == "https://runtime.sagemaker.cn-north-1.amazonaws.com.cn:8443"


def test_sagemaker_data_type_decides_then_the_whole_chunk_rule() -> None:
    assert classify_payload_part(b'{"type": "synthesis_start"}', "UTF8") == '{"type": "synthesis_start"}'
    assert classify_payload_part(b'{"type": "synthesis_start"}', "BINARY") == b'{"type": "synthesis_start"}'
    assert classify_payload_part(b'{"type": "synthesis_start"}', None) == '{"type": "synthesis_start"}'
    assert classify_payload_part(b"{\x00\x10", None) == b"{\x00\x10"
    assert classify_payload_part(b'{"a": 1} trailing', None) == b'{"a": 1} trailing'
    assert classify_payload_part(b"[1, 2]", None) == b"[1, 2]"  # JSON, but not an object


def test_sagemaker_partial_parts_keep_the_first_data_type() -> None:
    assembler = PartAssembler()
    assert assembler.feed(b'{"type":', "UTF8", "PARTIAL") is None
    assert assembler.feed(b'"x"}', None, None) == '{"type":"x"}'
    assert assembler.feed(b"\x01", "BINARY", "COMPLETE") == b"\x01"
