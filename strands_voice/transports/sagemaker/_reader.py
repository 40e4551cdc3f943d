"""The SageMaker stream's reader: response events pumped into a queue of whole Leg 1 frames.

One background task per stream reads, so :meth:`SageMakerTransport.receive` is cancellation-safe.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from strands_voice_protocol.errors import TTSConnectionError, TTSError

from strands_voice.transports._base import Frame
from strands_voice.transports.sagemaker._framing import PartAssembler, stream_error
from strands_voice.transports.sagemaker._sdk import TrackedHTTPClient, load_sdk

__all__ = ["EOF", "EndOfStream", "read_stream"]

logger = logging.getLogger(__name__)


class EndOfStream:
    """Queue marker: the endpoint closed the stream normally."""


EOF: Final = EndOfStream()


async def read_stream(
    models: Any,
    receiver: Any,
    http: TrackedHTTPClient | None,
    frames: asyncio.Queue[Frame | EndOfStream | TTSError],
) -> None:
    """Pump response events into ``frames``; always ends with :data:`EOF` or an error item.

    Args:
        models: The SDK's models module (its event and error types).
        receiver: The stream's output receiver.
        http: The HTTP client, asked whether the response failed when the events end.
        frames: Where whole frames, then the end, go.
    """
    assembler = PartAssembler()
    terminal: EndOfStream | TTSError
    try:
        while True:
            event = await receiver.receive()
            if event is None:
                if http is not None and http.response_failed():
                    terminal = TTSConnectionError(
                        "connection_lost", "the SageMaker stream dropped", retryable=True
                    )
                else:
                    terminal = EOF
                break
            if isinstance(event, models.ResponseStreamEventPayloadPart):
                part = event.value
                frame = assembler.feed(part.bytes_ or b"", part.data_type, part.completion_state)
                if frame is not None:
                    frames.put_nowait(frame)
            else:
                logger.debug("event=<%s> | unknown sagemaker event ignored", type(event).__name__)
    except asyncio.CancelledError:
        frames.put_nowait(TTSConnectionError("connection_lost", "the SageMaker transport is closed"))
        raise
    except (models.ModelStreamError, models.InternalStreamFailure) as exc:
        terminal = stream_error(exc, during="during the stream", opening=False)
    except Exception as exc:
        if isinstance(exc, load_sdk().call_error):
            terminal = stream_error(exc, during="during the stream", opening=False)
        else:
            logger.debug("sagemaker stream read failed", exc_info=True)
            terminal = TTSConnectionError("connection_lost", "the SageMaker stream dropped", retryable=True)
    frames.put_nowait(terminal)
