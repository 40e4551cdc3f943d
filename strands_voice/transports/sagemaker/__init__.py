"""Leg 1 over SageMaker's HTTP/2 bidirectional stream: :class:`SageMakerTransport`.

Inside, each apart: the pure framing rules (``_framing``: ``sagemaker://`` URLs, payload parts, error
codes; no I/O), the AWS settings (``_settings``: region, credentials, service endpoint), the stream reader
(``_reader``) and the optional AWS SDK glue (``_sdk``, imported lazily).
"""

from __future__ import annotations

from strands_voice.transports.sagemaker._framing import SageMakerTarget, parse_sagemaker_url
from strands_voice.transports.sagemaker._transport import SageMakerTransport

__all__ = ["SageMakerTarget", "SageMakerTransport", "parse_sagemaker_url"]
