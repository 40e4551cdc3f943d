"""SageMaker transport: one Leg 1 session over ``InvokeEndpointWithBidirectionalStream`` (HTTP/2).

On AWS the agent reaches the Kokoro container through SageMaker's bidirectional stream, an HTTP/2
event stream (``application/vnd.amazon.eventstream``) that boto3 does not implement. This module drives
it with ``aws-sdk-sagemaker-runtime-http2`` over the awscrt HTTP/2 client and presents it as a
:class:`~strands_voice.transports.FrameTransport`, so :class:`~strands_voice.session.TTSSession` and
everything above it run unchanged against a deployed endpoint.

Mapping (PROTOCOL.md, Leg 2):

* every client message is one ``PayloadPart`` marked ``DataType: UTF8`` (SageMaker hands the container
  a text WebSocket frame);
* incoming parts are told apart by ``data_type`` (``UTF8`` → control ``str``, ``BINARY`` → audio
  ``bytes``); a part without one falls back to the whole-chunk JSON rule
  (:func:`strands_voice_protocol.frames.is_control_frame`); ``PARTIAL`` parts are joined until the part that
  completes them;
* ``ModelStreamError`` / ``InternalStreamFailure`` (and errors answering the request itself) become
  :class:`~strands_voice_protocol.errors.SageMakerStreamError` carrying SageMaker's error code.

This module is the I/O (connect, send, the reader task, close); the rules themselves are pure functions
in ``_framing``, the region, credentials and service endpoint are found by
``_settings``, and the SDK's lazy import and adapters are in
``_sdk``.

The SDK is imported lazily: without it, :class:`~strands_voice_protocol.errors.MissingDependencyError`
says what to install.

Example:
    ```python
    transport = SageMakerTransport.from_url("sagemaker://kokoro-tts?region=us-east-1")
    async with TTSSession(transport) as session:
        ...
    ```
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, NoReturn

from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.errors import (
    TTSConnectionError,
    TTSError,
    TTSTimeoutError,
)

from strands_voice.transports._base import CONNECT_TIMEOUT_S, Frame
from strands_voice.transports.sagemaker._framing import (
    SageMakerTarget,
    check_endpoint_name,
    parse_sagemaker_url,
    stream_error,
)
from strands_voice.transports.sagemaker._reader import EndOfStream, read_stream
from strands_voice.transports.sagemaker._sdk import TrackedHTTPClient, load_sdk
from strands_voice.transports.sagemaker._settings import (
    resolve_credentials,
    resolve_endpoint_uri,
    resolve_region,
)

__all__ = ["SageMakerTransport"]

logger = logging.getLogger(__name__)


class SageMakerTransport:
    """A :class:`~strands_voice.transports.FrameTransport` over SageMaker's HTTP/2 bidirectional stream.

    One stream at a time; :meth:`connect` after :meth:`close` opens a new one (the session resumes this
    way). Errors carry the transport codes (the WebSocket transport's, for the same failures) and
    ``retryable`` (see :func:`~strands_voice.transports.sagemaker._framing.stream_error`).

    Args:
        endpoint_name: The SageMaker endpoint to invoke.
        region: AWS region; when None, ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` / the profile's region.
        target_variant: Production variant to route to (None: SageMaker picks by weight).
        endpoint_uri: Service endpoint override (e.g. a VPC endpoint, or a local test server); when
            None, ``AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME_HTTP2`` or the regional
            ``https://runtime.sagemaker.<region>.amazonaws.com:8443``.
        connect_timeout: Seconds :meth:`connect` may take until SageMaker answers the stream.
        silence_timeout: Seconds :meth:`receive` waits for a frame before ``TTSTimeoutError``; None
            waits forever (the session applies its own silence timeout while audio is owed).
        send_timeout: Seconds one :meth:`send` may wait for the connection to take the message.
        close_timeout: Seconds :meth:`close` waits for each direction to end cleanly before it cuts.
        http_client: The duplex HTTP client (default: a new ``AWSCRTHTTPClient``); tests pass a stand-in
            with ``SUPPORTS_DUPLEX_STREAMING = True`` and an async ``send``.
    """

    def __init__(
        self,
        endpoint_name: str,
        *,
        region: str | None = None,
        target_variant: str | None = None,
        endpoint_uri: str | None = None,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        silence_timeout: float | None = None,
        send_timeout: float = 10.0,
        close_timeout: float = 5.0,
        http_client: Any = None,
    ) -> None:
        #: The endpoint, and where and which variant (None: from the environment / SageMaker's choice).
        self.target = SageMakerTarget(
            check_endpoint_name(endpoint_name), region, target_variant, endpoint_uri
        )
        self.connect_timeout = connect_timeout
        self.silence_timeout = silence_timeout
        self.send_timeout = send_timeout
        self.close_timeout = close_timeout
        self._http_client_option = http_client
        self._http: TrackedHTTPClient | None = None
        self._client: Any = None
        self._stream: Any = None
        self._receiver: Any = None
        self._models: Any = None
        self._frames: asyncio.Queue[Frame | EndOfStream | TTSError] = asyncio.Queue()
        self._terminal: EndOfStream | TTSError | None = None
        self._reader: asyncio.Task[None] | None = None
        self._send_lock = asyncio.Lock()
        self._send_broken = False
        self._connected = False
        self._closed = False
        #: The production variant SageMaker routed the stream to (known after connect).
        self.invoked_variant: str | None = None

    @classmethod
    def from_url(cls, url: str, **options: Any) -> SageMakerTransport:
        """Create (not connect) a transport from ``sagemaker://<endpoint-name>[?region=..&variant=..]``.

        ``endpoint_url=https://host:port`` overrides the service endpoint. Other keyword ``options`` go
        to the constructor.

        Raises:
            ConfigurationError: the URL is not a valid ``sagemaker://`` URL.
        """
        target = parse_sagemaker_url(url)
        kwargs: dict[str, Any] = {
            "region": target.region,
            "target_variant": target.target_variant,
            "endpoint_uri": target.endpoint_uri,
        }
        kwargs.update(options)
        return cls(target.endpoint_name, **kwargs)

    # -- FrameTransport ------------------------------------------------------------------------------

    async def connect(self) -> None:
        """Open the bidirectional stream and wait until SageMaker answers it.

        Raises:
            MissingDependencyError: the ``sagemaker`` extra is not installed.
            TTSConnectionError: no region or no credentials (before any network call), or the
                endpoint could not be reached.
            SageMakerStreamError: SageMaker refused the stream (unknown endpoint, access denied, the
                container refused the WebSocket, ...): ``busy`` (retryable) for throttling and 429/503,
                else ``connection_failed``; SageMaker's own code is ``sagemaker_code``.
            TTSTimeoutError: SageMaker did not answer within ``connect_timeout``.
        """
        if self._connected and not self._closed and self._terminal is None:
            return
        if self._connected and not self._closed:
            await self.close()  # the old stream has ended: a new one replaces it
        self._reset()
        sdk = load_sdk()
        region = resolve_region(self.target.region)
        credentials = await resolve_credentials(sdk)
        endpoint_uri = resolve_endpoint_uri(self.target.endpoint_uri, region)
        inner = self._http_client_option if self._http_client_option is not None else sdk.crt_client_cls()
        self._http = TrackedHTTPClient(inner)
        overrides: dict[str, Any] = {"region": region, "endpoint_uri": endpoint_uri, "transport": self._http}
        if credentials is not None:
            overrides["aws_credentials_identity_resolver"] = credentials
        self._models = sdk.models
        request = sdk.models.InvokeEndpointWithBidirectionalStreamInput(
            endpoint_name=self.target.endpoint_name, target_variant=self.target.target_variant
        )
        output = await self._invoke(sdk, overrides, request, endpoint_uri)
        self.invoked_variant = getattr(output, "invoked_production_variant", None)
        self._connected = True
        reading = read_stream(self._models, self._receiver, self._http, self._frames)
        self._reader = asyncio.create_task(reading, name=f"sagemaker-reader-{self.target.endpoint_name}")
        logger.debug(
            "endpoint=<%s>, region=<%s>, variant=<%s> | sagemaker stream open",
            self.target.endpoint_name,
            region,
            self.invoked_variant,
        )

    async def _invoke(self, sdk: Any, overrides: dict[str, Any], request: Any, endpoint_uri: str) -> Any:
        """Open the stream within ``connect_timeout``: SageMaker's first answer (its output), or a typed
        error once the half-open stream is aborted."""
        try:
            async with asyncio.timeout(self.connect_timeout):
                config = await sdk.config_cls.resolve(**overrides)
                self._client = sdk.client_cls(config=config)
                self._stream = await self._client.invoke_endpoint_with_bidirectional_stream(request)
                output, self._receiver = await self._stream.await_output()
        except TimeoutError:
            await self._abort()
            raise TTSTimeoutError(
                "connect_timeout",
                f"SageMaker did not answer the stream within {self.connect_timeout} s",
                retryable=True,
            ) from None
        except BaseException as exc:
            await self._abort()
            if isinstance(exc, TTSError | asyncio.CancelledError) or not isinstance(exc, Exception):
                raise
            if isinstance(exc, sdk.call_error):
                raise stream_error(exc, during="opening the stream", opening=True) from None
            logger.debug("endpoint_uri=<%s> | connect failed", endpoint_uri, exc_info=True)
            raise TTSConnectionError(
                "connection_failed",
                f"could not reach SageMaker at {endpoint_uri} ({type(exc).__name__})",
                retryable=True,
            ) from None
        return output

    async def send(self, message: str) -> None:
        """Send one client message as one ``UTF8`` PayloadPart.

        Raises:
            TTSConnectionError: not connected, closed, or the stream has ended or broken.
            TTSTimeoutError: the connection did not take the message within ``send_timeout``.
        """
        if not self._connected or self._closed or self._stream is None:
            raise TTSConnectionError("connection_lost", "the SageMaker stream is not open")
        models = self._models
        part = models.RequestStreamEventPayloadPart(
            value=models.RequestPayloadPart(
                bytes_=message.encode("utf-8"), data_type="UTF8", completion_state="COMPLETE"
            )
        )
        async with self._send_lock:
            stream = self._stream
            if self._closed or stream is None:
                raise TTSConnectionError("connection_lost", "the SageMaker transport is closed")
            if self._send_broken or self._terminal is not None:
                raise TTSConnectionError("connection_lost", "the SageMaker stream has ended", retryable=True)
            try:
                async with asyncio.timeout(self.send_timeout):
                    await stream.input_stream.send(part)
            except TimeoutError:
                # Event signatures chain: a half-sent message leaves the stream unusable.
                self._send_broken = True
                raise TTSConnectionError(
                    "connection_lost",
                    f"SageMaker did not take a message within {self.send_timeout} s",
                    retryable=True,
                ) from None
            except asyncio.CancelledError:
                self._send_broken = True
                raise
            except Exception:
                self._send_broken = True
                logger.debug("send failed", exc_info=True)
                raise TTSConnectionError(
                    "connection_lost", "the SageMaker stream dropped", retryable=True
                ) from None

    async def receive(self) -> Frame:
        """Wait for the next frame from the endpoint (``str`` control, ``bytes`` audio).

        Cancellation-safe: frames are read by one background task and queued.

        Raises:
            EOFError: the stream ended normally.
            SageMakerStreamError: SageMaker ended the stream with ``ModelStreamError`` or
                ``InternalStreamFailure``.
            TTSConnectionError: the connection dropped, or the transport is not open.
            TTSTimeoutError: nothing arrived within ``silence_timeout``.
        """
        if not self._connected:
            raise TTSConnectionError("connection_lost", "the SageMaker stream is not open")
        if self._terminal is not None and self._frames.empty():
            self._raise_terminal(self._terminal)
        if self._closed and self._frames.empty():
            raise TTSConnectionError("connection_lost", "the SageMaker transport is closed")
        try:
            if self.silence_timeout is None:
                item = await self._frames.get()
            else:
                async with asyncio.timeout(self.silence_timeout):
                    item = await self._frames.get()
        except TimeoutError:
            raise TTSTimeoutError(
                "silence_timeout", f"nothing arrived from SageMaker within {self.silence_timeout} s"
            ) from None
        if isinstance(item, EndOfStream | TTSError):
            self._raise_terminal(item)
        return item

    async def close(self) -> None:
        """End our direction (the signed end frame), let SageMaker end its own, then release the
        connection. Bounded by ``close_timeout`` per step; safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        stream, reader, http = self._stream, self._reader, self._http
        if stream is not None and self._connected and (http is None or http.request_open()):
            try:
                async with asyncio.timeout(self.close_timeout):
                    async with self._send_lock:
                        await stream.input_stream.close()
            except (TimeoutError, Exception):
                logger.debug("input stream did not close cleanly", exc_info=True)
        if reader is not None and not reader.done():
            # SageMaker ends the response once the container's side is closed; wait for that briefly.
            await asyncio.wait({reader}, timeout=self.close_timeout)
        await self._abort()
        if self._terminal is None:
            self._terminal = TTSConnectionError("connection_lost", "the SageMaker transport is closed")
        logger.debug("endpoint=<%s> | sagemaker stream closed", self.target.endpoint_name)

    # -- internals -----------------------------------------------------------------------------------

    def _reset(self) -> None:
        """Forget a previous (closed) stream, so :meth:`connect` opens a new one (resume)."""
        self._frames = asyncio.Queue()
        self._terminal = None
        self._send_broken = False
        self._connected = False
        self._closed = False
        self.invoked_variant = None

    def _raise_terminal(self, item: EndOfStream | TTSError) -> NoReturn:
        self._terminal = item
        if isinstance(item, EndOfStream):
            raise EOFError("the SageMaker stream ended")
        raise item

    async def _abort(self) -> None:
        """Stop the reader and release the stream, client and connection; bounded, never raises."""
        reader, self._reader = self._reader, None
        if reader is not None:
            await cancel_and_wait([reader], self.close_timeout)
        receiver = self._receiver
        if receiver is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(self.close_timeout):
                    await receiver.close()
        stream = self._stream
        if stream is not None and self._receiver is None:
            # The output never arrived: cancel the SDK's pending call so no task outlives us.
            future = getattr(stream, "_output_future", None)
            if future is not None and not future.done():
                future.cancel()
                await asyncio.wait({future}, timeout=self.close_timeout)
        for closable in (self._client, self._http):
            if closable is None:
                continue
            with contextlib.suppress(Exception):
                async with asyncio.timeout(self.close_timeout):
                    await closable.close()
        self._client = None
        self._http = None
        self._stream = None
        self._receiver = None
