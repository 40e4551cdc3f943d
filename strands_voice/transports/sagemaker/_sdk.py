"""The optional AWS SDK behind the SageMaker transport, imported lazily, and the adapters handed to it.

* :func:`load_sdk` imports ``aws-sdk-sagemaker-runtime-http2`` (with awscrt) or says what to install;
* :class:`TrackedHTTPClient` wraps the duplex HTTP/2 client so the transport can see its stream.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from strands_voice.transports._aws import SmithySDK, load_smithy_sdk

__all__ = ["TrackedHTTPClient", "load_sdk"]

logger = logging.getLogger(__name__)

_INSTALL_HINT: Final = "pip install 'strands-voice[sagemaker]'"


def load_sdk() -> SmithySDK:
    """Import the optional SDK (``aws-sdk-sagemaker-runtime-http2`` with awscrt), or say what to install."""
    return load_smithy_sdk("aws_sdk_sagemaker_runtime_http2", "AsyncSageMakerRuntimeHTTP2", _INSTALL_HINT)


class TrackedHTTPClient:
    """Wraps the duplex HTTP client: keeps the response, and survives the SDK's config deep copy.

    The SDK deep-copies its config (and so the transport) on first use; returning ``self`` keeps the
    transport this session created (and tests' stand-ins) the one that actually carries the call.
    """

    SUPPORTS_DUPLEX_STREAMING = True

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.TIMEOUT_EXCEPTIONS: tuple[type[BaseException], ...] = tuple(
            getattr(inner, "TIMEOUT_EXCEPTIONS", ())
        )
        self.response: Any = None

    async def send(self, request: Any, *, request_config: Any = None) -> Any:
        self.response = await self.inner.send(request, request_config=request_config)
        writer = self._writer()
        if writer is not None:
            # awscrt writes the request body on a task of its own that fails when the server resets the
            # stream after ending its response (HTTP/2 allows that); retrieve its error so asyncio does
            # not report it as "never retrieved".
            writer.add_done_callback(_retrieve_error)
        return self.response

    def _writer(self) -> asyncio.Task[Any] | None:
        writer = getattr(getattr(self.response, "_stream", None), "_writer", None)
        return writer if isinstance(writer, asyncio.Task) else None

    def request_open(self) -> bool:
        """False once awscrt stopped writing the request body (the stream is over); True if unknown."""
        writer = self._writer()
        return writer is None or not writer.done()

    def response_failed(self) -> bool:
        """True when the HTTP/2 stream ended with an error rather than END_STREAM.

        awscrt ends a reset or dropped stream's body just like a finished one; only the stream's
        completion tells them apart. Best effort: False when that is not visible.
        """
        stream = getattr(self.response, "_stream", None)
        completion = getattr(stream, "_completion_future", None)
        try:
            return bool(completion is not None and completion.done() and completion.exception() is not None)
        except Exception:
            return False

    async def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            await close()

    def __deepcopy__(self, memo: dict[int, Any]) -> TrackedHTTPClient:
        return self


def _retrieve_error(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.debug("request body writer ended: %r", task.exception())
