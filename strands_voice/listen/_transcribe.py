"""Amazon Transcribe streaming through the official SDK (``aws-sdk-transcribe-streaming``, HTTP/2 on awscrt).

One ``StartStreamTranscription`` stream per caller turn: the turn's audio goes out as ``AudioEvent``
chunks of ``chunk_ms`` while a reader task collects the ``TranscriptEvent`` results. A partial result is
its segment's text so far; a final one closes the segment (:class:`TranscriptSegments`). ``feed`` returns
the turn's text each time it changed; ``finish`` ends the audio, waits for the last results and returns
the text. Region and credentials come from the standard AWS chain (``transports._aws``); the caller
needs the IAM permission ``transcribe:StartStreamTranscription``. Service errors become
:class:`~strands_voice_protocol.errors.RecognitionError` with a code and a plain message (a caller may see
it); the service's own text goes to the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.errors import ConfigurationError, RecognitionError, RecognitionErrorCode
from strands_voice_protocol.languages import hearing_language

from strands_voice.listen._deps import transcribe_sdk
from strands_voice.listen._recognizer import RecognitionStream, Recognized
from strands_voice.transports import BotocoreCredentials, chain_credentials, chain_region, unmodeled_error

if TYPE_CHECKING:
    from strands_voice.transports import SmithySDK

__all__ = ["TranscribeRecognizer", "TranscriptSegments", "recognition_error"]

logger = logging.getLogger(__name__)

_CLOSE_GRACE_S: Final = 5.0

#: Transcribe's modeled stream errors: the code each becomes and whether a later turn may succeed.
_SERVICE_ERRORS: Final[dict[str, tuple[RecognitionErrorCode, bool]]] = {
    "BadRequestException": ("invalid_request", False),
    "LimitExceededException": ("busy", True),
    "ServiceUnavailableException": ("busy", True),
    "ConflictException": ("connection_lost", True),
    "InternalFailureException": ("internal", True),
}


#: What a caller is told for each code: a plain sentence. The service's own text (which may name the
#: account, the role or the request) goes to the log only.
_PLAIN: Final[dict[RecognitionErrorCode, str]] = {
    "invalid_request": "Amazon Transcribe refused the stream's settings",
    "busy": "Amazon Transcribe is busy; try again",
    "connection_failed": "Amazon Transcribe could not be reached",
    "connection_lost": "the Amazon Transcribe stream was lost",
    "internal": "Amazon Transcribe failed",
}


def recognition_error(exc: BaseException, *, opening: bool) -> RecognitionError:
    """The coded error for what the SDK raised while opening (``opening``) or reading a stream.

    Its message is plain (:data:`_PLAIN`); the service's error name is ``service_code`` and its text is
    logged here, never passed on.
    """
    name = type(exc).__name__
    detail = str(getattr(exc, "message", "") or exc)
    status: int | None = None
    unmodeled = unmodeled_error(exc)
    if unmodeled is not None:  # an error the SDK does not model: AccessDeniedException, ...
        name, status = unmodeled
        detail = f"{name} (HTTP {status})"
    # An unmodeled event error names its code; an unmodeled HTTP error, its shape.
    service_code = (
        name if unmodeled is not None or name in _SERVICE_ERRORS else str(getattr(exc, "code", "") or "")
    )
    code, retryable = _code(name, status, getattr(exc, "fault", None) == "client", opening=opening)
    logger.warning(
        "code=<%s>, service_code=<%s>, error=<%s>, detail=<%s> | amazon transcribe error",
        code,
        service_code,
        name,
        detail,
    )
    message = _PLAIN[code]
    if opening and code == "connection_failed" and not retryable:
        message = "Amazon Transcribe refused the stream"
    return RecognitionError(code, message, service_code=service_code, retryable=retryable)


def _code(
    name: str, status: int | None, client_fault: bool, *, opening: bool
) -> tuple[RecognitionErrorCode, bool]:
    """The code an SDK error becomes and whether a later turn may succeed."""
    if name in _SERVICE_ERRORS:
        return _SERVICE_ERRORS[name]
    if status in (429, 503):
        return "busy", True
    refused = client_fault or (status is not None and 400 <= status < 500)
    if opening and refused:  # for good: access denied, unknown credentials, a bad signature
        return "connection_failed", False
    return ("connection_failed" if opening else "connection_lost"), True


class TranscriptSegments:
    """A turn's text from Transcribe's results (sans-I/O).

    A partial result revises its segment (by ``result_id``); a final one closes it. The text is the closed
    segments, then the open ones, in order.
    """

    def __init__(self) -> None:
        self._closed: list[str] = []
        self._open: dict[str, str] = {}

    def add(self, result_id: str, text: str, *, partial: bool) -> bool:
        """One result in; True when the turn's text changed."""
        before = self.text()
        if partial:
            self._open[result_id] = text.strip()
        else:
            self._open.pop(result_id, None)
            if text.strip():
                self._closed.append(text.strip())
        return self.text() != before

    def text(self) -> str:
        """The closed segments and the open ones, joined."""
        return " ".join(part for part in [*self._closed, *self._open.values()] if part)


class TranscribeRecognizer:
    """Amazon Transcribe streaming: one ``StartStreamTranscription`` stream per turn, partials as it hears.

    Args:
        region: The AWS region (default: the standard chain: ``AWS_REGION``, the profile).
        language_code: The spoken language (``en-US``, ``ja-JP``, ...).
        sample_rate: The audio's rate in Hz (PCM16 mono; the listener's is 16 kHz).
        endpoint_uri: A service endpoint override (a VPC endpoint; a local server in tests); default the
            regional endpoint, or ``AWS_ENDPOINT_URL_TRANSCRIBE_STREAMING``.
        credentials: An SDK identity resolver (default: botocore's chain, the one boto3 uses).
        chunk_ms: Audio per ``AudioEvent`` (Transcribe advises 50 to 200 ms).
        connect_timeout_s: The most a stream may take to be answered.
        finish_timeout_s: The most the last results may take once the turn's audio has ended.
    """

    def __init__(
        self,
        *,
        region: str | None = None,
        language_code: str = "en-US",
        sample_rate: int = 16000,
        endpoint_uri: str | None = None,
        credentials: Any = None,
        chunk_ms: int = 100,
        connect_timeout_s: float = 10.0,
        finish_timeout_s: float = 10.0,
    ) -> None:
        if not 8000 <= sample_rate <= 48000:
            raise ConfigurationError(f"sample_rate must be 8000 to 48000 Hz, not {sample_rate}")
        if not 20 <= chunk_ms <= 1000:
            raise ConfigurationError(f"chunk_ms must be 20 to 1000, not {chunk_ms}")
        self.region = region
        self.language_code = language_code
        self.sample_rate = sample_rate
        self.endpoint_uri = endpoint_uri
        self.chunk_bytes = sample_rate * chunk_ms // 1000 * 2
        self.connect_timeout_s = connect_timeout_s
        self.finish_timeout_s = finish_timeout_s
        self._credentials = credentials
        self._overrides: dict[str, Any] | None = None
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def hearing(self, language: str) -> TranscribeRecognizer:
        """A recognizer of ``language`` (a BCP-47 tag, an ISO code or Kokoro's letter: ``j`` → ``ja-JP``)
        with this one's settings (its region, endpoint and credentials)."""
        other = copy.copy(self)
        known = hearing_language(language)
        other.language_code = known.tag if known is not None else language
        return other

    async def warm_up(self) -> None:
        """Find the region and the credentials ahead of the first turn (no call to the service)."""
        await self._settings(transcribe_sdk())

    async def _settings(self, sdk: SmithySDK) -> dict[str, Any]:
        """The client's region, endpoint and credentials, found once.

        Raises:
            RecognitionError: ``connection_failed``: no region, or no credentials, anywhere.
        """
        if self._overrides is not None:
            return self._overrides
        region = chain_region(self.region)
        if region is None:
            raise RecognitionError(
                "connection_failed", "No AWS region for Amazon Transcribe: pass region= or set AWS_REGION."
            )
        overrides: dict[str, Any] = {"region": region}
        if self.endpoint_uri is not None:
            overrides["endpoint_uri"] = self.endpoint_uri
        credentials = self._credentials
        if credentials is None:
            with contextlib.suppress(ImportError):  # without botocore the SDK's own chain looks
                found = await _chain_credentials()
                credentials = BotocoreCredentials(found, sdk.identity_cls)
        if credentials is not None:
            overrides["aws_credentials_identity_resolver"] = credentials
        self._overrides = overrides
        logger.debug("region=<%s>, endpoint=<%s> | transcribe settings found", region, self.endpoint_uri)
        return overrides

    async def _client_here(self, sdk: SmithySDK) -> Any:
        """The SDK client of the running loop (its HTTP/2 connection is reused from turn to turn)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            overrides = {**await self._settings(sdk), "transport": sdk.crt_client_cls()}
            config = await sdk.config_cls.resolve(**overrides)
            self._client, self._client_loop = sdk.client_cls(config=config), loop
        return self._client

    async def open(self, prompt: str | None = None) -> RecognitionStream:
        """Start one turn's stream (the service's answer is awaited by the stream's reader, not here).

        ``prompt`` is not used: Transcribe streaming takes no free-text context (custom vocabularies are
        set on the service).

        Raises:
            MissingDependencyError: the ``listen`` extra is not installed.
            RecognitionError: no region or credentials, or the request could not be made.
        """
        sdk = transcribe_sdk()
        client = await self._client_here(sdk)
        request = sdk.models.StartStreamTranscriptionInput(
            language_code=self.language_code, media_sample_rate_hertz=self.sample_rate, media_encoding="pcm"
        )
        try:
            stream = await client.start_stream_transcription(request)
        except Exception as exc:
            logger.debug("transcribe stream could not start", exc_info=True)
            raise recognition_error(exc, opening=True) from None
        return _TranscribeStream(self, stream, sdk.models)

    async def aclose(self) -> None:
        """Close the client and its connections (the recognizer opens a new one if used again)."""
        client, self._client, self._client_loop = self._client, None, None
        if client is not None:
            await client.close()


async def _chain_credentials() -> Any:
    """The chain's credentials, or a coded error when it failed or found none."""
    try:
        credentials = await chain_credentials()
    except ImportError:
        raise
    except Exception as exc:
        logger.debug("credential lookup failed", exc_info=True)
        raise RecognitionError(
            "connection_failed", f"AWS credentials could not be loaded ({type(exc).__name__})"
        ) from None
    if credentials is None:
        raise RecognitionError(
            "connection_failed",
            "No AWS credentials for Amazon Transcribe: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
            "choose a profile with AWS_PROFILE, or run with an IAM role.",
        )
    return credentials


class _TranscribeStream:
    """One turn's Transcribe stream: audio out in chunks, results read by a task of its own."""

    def __init__(self, recognizer: TranscribeRecognizer, stream: Any, models: ModuleType) -> None:
        self._recognizer = recognizer
        self._stream = stream
        self._models = models
        self._pending = bytearray()
        self._segments = TranscriptSegments()
        self._partials: list[str] = []
        self._error: RecognitionError | None = None
        self._receiver: Any = None
        self._input_closed = False
        self._closed = False
        self._reader = asyncio.create_task(self._read(), name="transcribe-reader")
        self._tasks: set[asyncio.Task[None]] = {self._reader}

    async def feed(self, pcm16: bytes) -> list[str]:
        self._raise_if_failed()
        self._pending += pcm16
        size = self._recognizer.chunk_bytes
        while len(self._pending) >= size:
            chunk = bytes(self._pending[:size])
            del self._pending[:size]
            await self._send(chunk)
        partials, self._partials = self._partials, []
        return partials

    async def pause(self) -> None:
        """Nothing to do: a streaming engine recognizes as it hears."""

    async def resume(self) -> None:
        """Nothing to do: a streaming engine recognizes as it hears."""

    async def words_so_far(self) -> Recognized | None:
        """What the service has heard so far (its latest results, partial ones included)."""
        text = self._segments.text()
        return Recognized(text) if text else None

    async def finish(self) -> Recognized:
        self._raise_if_failed()
        if self._pending:
            chunk, self._pending = bytes(self._pending), bytearray()
            await self._send(chunk)
        await self._close_input()
        done, _ = await asyncio.wait({self._reader}, timeout=self._recognizer.finish_timeout_s)
        self._raise_if_failed()
        if not done:
            raise RecognitionError(
                "silence_timeout",
                f"Amazon Transcribe sent no final result within {self._recognizer.finish_timeout_s} s",
                retryable=True,
            )
        return Recognized(self._segments.text())

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            async with asyncio.timeout(_CLOSE_GRACE_S):
                await self._close_input()
        await cancel_and_wait(self._tasks, _CLOSE_GRACE_S)
        if self._receiver is not None:
            with contextlib.suppress(Exception):
                await self._receiver.close()

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise self._error

    async def _send(self, chunk: bytes) -> None:
        event = self._models.AudioStreamAudioEvent(value=self._models.AudioEvent(audio_chunk=chunk))
        try:
            await self._stream.input_stream.send(event)
        except Exception:
            logger.debug("audio_bytes=<%d> | transcribe audio not sent", len(chunk), exc_info=True)
            # The reader knows why the stream ended (an error event, a refusal): wait for it, bounded.
            await asyncio.wait({self._reader}, timeout=self._recognizer.connect_timeout_s)
            self._raise_if_failed()
            raise RecognitionError(
                "connection_lost", "the Amazon Transcribe stream ended", retryable=True
            ) from None

    async def _close_input(self) -> None:
        if not self._input_closed:
            self._input_closed = True
            await self._stream.input_stream.close()  # the signed end frame: no more audio

    async def _read(self) -> None:
        """Await the service's answer, then collect its results until the stream ends."""
        try:
            async with asyncio.timeout(self._recognizer.connect_timeout_s):
                _output, self._receiver = await self._stream.await_output()
        except TimeoutError:
            self._error = RecognitionError(
                "connect_timeout",
                f"Amazon Transcribe did not answer within {self._recognizer.connect_timeout_s} s",
                retryable=True,
            )
            return
        except Exception as exc:
            logger.debug("transcribe stream refused", exc_info=True)
            self._error = recognition_error(exc, opening=True)
            return
        try:
            while (event := await self._receiver.receive()) is not None:
                self._take(event)
        except Exception as exc:
            logger.debug("transcribe stream ended with an error", exc_info=True)
            self._error = recognition_error(exc, opening=False)

    def _take(self, event: Any) -> None:
        if not isinstance(event, self._models.TranscriptResultStreamTranscriptEvent):
            logger.debug("event=<%s> | transcribe event ignored", type(event).__name__)
            return
        transcript = event.value.transcript
        for result in (transcript.results if transcript is not None else None) or []:
            alternatives = result.alternatives or []
            text = (alternatives[0].transcript or "") if alternatives else ""
            if self._segments.add(result.result_id or "", text, partial=result.is_partial):
                self._partials.append(self._segments.text())
