"""The SageMaker transport: Leg 1 over SageMaker's HTTP/2 bidirectional stream.

* :mod:`.framing`: the pure rules (``sagemaker://`` URLs, payload parts, error codes), no I/O;
* :mod:`.sdk`: the optional AWS SDK (imported lazily) and the adapters handed to it;
* :mod:`.transport`: :class:`SageMakerTransport`, the I/O that ties them together.
"""

from __future__ import annotations

from strands_voice.sagemaker.framing import (
    PartAssembler,
    SageMakerTarget,
    classify_payload_part,
    default_endpoint_uri,
    parse_sagemaker_url,
)
from strands_voice.sagemaker.transport import SageMakerTransport

__all__ = [
    "PartAssembler",
    "SageMakerTarget",
    "SageMakerTransport",
    "classify_payload_part",
    "default_endpoint_uri",
    "parse_sagemaker_url",
]
