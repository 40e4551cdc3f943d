"""The two voice modes as Leg 3 event generators: ``bidi`` (speak while the agent writes) and ``batch``.

Both run a Strands agent on a prompt and yield PROTOCOL.md Leg 3 events (``agent_start`` … ``agent_end``).
Both open one Leg 1 session at the start and encode the endpoint's pcm16 the same way
(:func:`strands_voice.audio.create_encoder`), so they differ ONLY in when synthesis starts:

- ``bidi``: two concurrent tasks push into one shared queue, so events leave in true arrival order. One
  drains the agent's text into the incremental chunker and sends each chunk to the session the moment
  it is yielded (without waiting for earlier audio); the other drains the session's audio.
- ``batch``: the fair baseline. The text task waits for the whole response, then sends ONE synthesis
  request with all of it. When the text is longer than ``max_request_chars`` (the endpoint's per-request
  limit, ``max_text_chars``), it is split at sentence ends into the FEWEST requests that fit, all sent at
  once on the same session (the endpoint pipelines them). ``audio_chunk.sentence`` is then the index of
  that request (0 in the usual one-request case).

Speech failures never stop the text: they become ``error`` events (``code`` is the endpoint's code, e.g.
``text_too_long``, or the client's: ``connection_failed``, ``connect_timeout``, ``connection_lost``,
``silence_timeout``, ``busy``) and the text keeps flowing. A failure of the session itself is
reported once; later chunks are then not spoken. When the caller stops iterating (``aclose``, a
cancelled consumer), every task is cancelled and the session closed.

The shared queue is bounded (``max_queued_events``): a consumer that reads slowly slows the tasks down
instead of having the whole answer's audio buffered for it. The audio task stops reading the TTS session
(so the endpoint's own backpressure takes over), and the text task waits for room too. The few events
raised outside those two loops (an error, the end marker) are never held back, so nothing deadlocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import uuid
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from strands_voice.audio import BYTES_PER_SECOND, SAMPLE_RATE, create_encoder
from strands_voice.chunker import IncrementalSentenceChunker, clean_for_speech
from strands_voice.connect import transport_from_url
from strands_voice.errors import TTSError
from strands_voice.events import Event, EventBuilder
from strands_voice.session import (
    AudioChunk,
    RequestCompleted,
    RequestFailed,
    RequestStarted,
    SessionEvent,
    TTSSession,
    WordsReceived,
)
from strands_voice.tasks import cancel_and_wait
from strands_voice.transport import FrameTransport

if TYPE_CHECKING:
    from strands import Agent

__all__ = [
    "DEFAULT_MAX_REQUEST_CHARS",
    "Mode",
    "Speaker",
    "TransportFactory",
    "VoiceOptions",
    "run_batch",
    "run_bidi",
    "run_voice",
    "split_for_requests",
]

logger = logging.getLogger(__name__)

Mode = Literal["bidi", "batch"]

#: Creates a fresh (unconnected) transport for one session.
TransportFactory = Callable[[], FrameTransport]

#: Batch mode's per-request text limit; matches the endpoint's default ``max_text_chars``.
DEFAULT_MAX_REQUEST_CHARS: Final = 5000

#: Events a run holds for a slow consumer before its tasks wait (an ``audio_chunk`` of pcm16 is at most
#: one endpoint frame, 24 kB of audio, about 32 kB as base64).
_MAX_QUEUED_EVENTS: Final = 32

#: Seconds to wait for cancelled tasks to end before giving up on them.
_CANCEL_TIMEOUT: Final = 5.0

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?…])\s+")


@dataclass(frozen=True, slots=True)
class VoiceOptions:
    """What the audio should sound like and how it is encoded.

    Attributes:
        voice: The voice (None: the endpoint's default).
        speed: The speed (None: the endpoint's default, 1.0).
        format: ``pcm16``, ``wav``, ``mp3`` or ``opus`` (see ``strands_voice.audio.AUDIO_FORMATS``).
    """

    voice: str | None = None
    speed: float | None = None
    format: str = "pcm16"


def split_for_requests(text: str, max_chars: int) -> list[str]:
    """Split text into the fewest pieces of at most ``max_chars``, at sentence ends where possible.

    A single sentence longer than ``max_chars`` is split at whitespace (hard-cut if it has none).
    """
    text = text.strip()
    if not text:
        return []
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_SPLIT.split(text):
        while len(sentence) > max_chars:
            cut = sentence.rfind(" ", 0, max_chars + 1)
            cut = cut if cut > 0 else max_chars
            head, sentence = sentence[:cut].strip(), sentence[cut:].strip()
            if current:
                pieces.append(current)
                current = ""
            pieces.append(head)
        if not sentence:
            continue
        candidate = f"{current} {sentence}" if current else sentence
        if len(candidate) <= max_chars:
            current = candidate
        else:
            pieces.append(current)
            current = sentence
    if current:
        pieces.append(current)
    return pieces


async def _cancel_all(tasks: list[asyncio.Task[Any]]) -> None:
    """Cancel tasks and wait (bounded) for them to end."""
    await cancel_and_wait(tasks, _CANCEL_TIMEOUT)
    for task in tasks:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: the error was already reported as an event


class _EventQueue:
    """The run's shared event queue, bounded for the producers that wait for room.

    The text and audio tasks await :meth:`wait_for_room` before adding an event (backpressure: they
    wait while ``maxsize`` events are queued). :meth:`put_nowait` itself never waits nor fails, so the
    few events that must not be held back (an error raised outside the tasks' loops, the end marker)
    always get through, and a consumer that closes the run never finds a producer stuck on a put.
    """

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("max_queued_events must be at least 1")
        self.maxsize = maxsize
        self._items: deque[Event | None] = deque()
        self._readable = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()

    def put_nowait(self, item: Event | None) -> None:
        self._items.append(item)
        self._readable.set()
        if len(self._items) >= self.maxsize:
            self._room.clear()

    async def wait_for_room(self) -> None:
        while len(self._items) >= self.maxsize:
            self._room.clear()
            await self._room.wait()

    async def get(self) -> Event | None:
        while not self._items:
            self._readable.clear()
            await self._readable.wait()
        item = self._items.popleft()
        if len(self._items) < self.maxsize:
            self._room.set()
        return item


class Speaker:
    """Speaks text chunks over one TTS session and turns its audio into Leg 3 events.

    The shared core of both modes and of :class:`strands_voice.handler.VoiceCallbackHandler`. All
    methods run on one event loop. Events go to ``emit`` as they happen, stamped by ``builder``.

    Args:
        transport_factory: Creates the session's transport.
        builder: Stamps events with ``t_ms``.
        emit: Receives each event (called on the loop; must not block).
        options: Voice, speed and output format.
        connect_timeout: Seconds opening the session may take.
        silence_timeout: Seconds the endpoint may stay silent while audio is owed.
        request_id_prefix: Prefix of the session's request ids.
        wait_for_room: Awaited before each session event is handled: a slow consumer of ``emit``'s
            events slows the reading of the session's audio (backpressure) instead of piling it up.
    """

    def __init__(
        self,
        transport_factory: TransportFactory,
        builder: EventBuilder,
        emit: Callable[[Event], None],
        options: VoiceOptions | None = None,
        *,
        connect_timeout: float = 10.0,
        silence_timeout: float = 30.0,
        request_id_prefix: str | None = None,
        wait_for_room: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.options = options or VoiceOptions()
        self.builder = builder
        self._emit = emit
        self._wait_for_room = wait_for_room
        self._encoder = create_encoder(self.options.format)
        self._transport_factory = transport_factory
        self._session_args: dict[str, Any] = {
            "voice": self.options.voice,
            "speed": self.options.speed,
            "connect_timeout": connect_timeout,
            "silence_timeout": silence_timeout,
            "request_id_prefix": request_id_prefix,
        }
        self.session: TTSSession | None = None
        self._opening: asyncio.Task[None] | None = None
        self._receiving: asyncio.Task[None] | None = None
        self._sentences: dict[str, tuple[int, str]] = {}  # request_id -> (index, text)
        self._request_bytes: dict[str, int] = {}
        self._next_sentence = 0
        self._last_sentence = 0
        self.failed = False
        self.audio_started = False
        self.chunks = 0
        self.pcm_bytes = 0
        self.ttfa_ms: float | None = None
        self.audio_ms: float | None = None

    @property
    def tasks(self) -> list[asyncio.Task[None]]:
        """The speaker's own tasks (for tests and shutdown)."""
        return [task for task in (self._opening, self._receiving) if task is not None]

    def start(self) -> None:
        """Open the session in the background and start draining its audio."""
        if self._opening is not None:
            return
        self._opening = asyncio.create_task(self._open(), name="voice-open")
        self._receiving = asyncio.create_task(self._drain_audio(), name="voice-audio")

    async def _open(self) -> None:
        session = TTSSession(self._transport_factory(), **self._session_args)
        try:
            await session.open()
        except TTSError as error:
            self._report(error)
            return
        self.session = session

    def _report(self, error: TTSError) -> None:
        """Report a failure of the session itself, once."""
        if self.failed:
            return
        self.failed = True
        logger.debug("code=<%s> | speech failed: %s", error.code, error.message)
        self._emit(self.builder.error(code=error.code, message=f"Speech failed: {error.message}."))

    async def _ready(self) -> TTSSession | None:
        """The open session, or None once speech has failed."""
        if self._opening is None:
            self.start()
        assert self._opening is not None
        await asyncio.shield(self._opening)
        return None if self.failed else self.session

    async def speak(self, text: str) -> None:
        """Send one chunk for synthesis now (a no-op once speech has failed)."""
        if not text.strip():
            return
        session = await self._ready()
        if session is None:
            return
        index = self._next_sentence
        self._next_sentence += 1
        rid = session.new_request_id()
        self._sentences[rid] = (index, text)
        try:
            await session.synthesize(text, request_id=rid)
        except TTSError as error:
            self._report(error)

    async def finish(self) -> None:
        """No more text: the session ends once the owed audio has arrived."""
        session = await self._ready()
        if session is not None:
            with contextlib.suppress(TTSError):
                await session.finish()

    async def wait(self) -> None:
        """Wait until all owed audio has been emitted (or speech failed)."""
        if self._receiving is not None:
            await asyncio.shield(self._receiving)

    def end_events(self) -> None:
        """Emit the encoder's tail and ``audio_end`` (when any audio started)."""
        tail = self._encoder.flush()
        if tail:
            self._emit_audio(tail)
        if self.audio_started:
            self._emit(
                self.builder.audio_end(chunks=self.chunks, duration_s=self.pcm_bytes / BYTES_PER_SECOND)
            )

    async def aclose(self) -> None:
        """Cancel the speaker's tasks and close the session."""
        await _cancel_all(self.tasks)
        if self.session is not None:
            await self.session.close()

    def _emit_audio(self, data: bytes) -> None:
        event = self.builder.audio_chunk(seq=self.chunks, sentence=self._last_sentence, data=data)
        self.chunks += 1
        if self.ttfa_ms is None:
            self.ttfa_ms = event["t_ms"]
        self.audio_ms = event["t_ms"]
        self._emit(event)

    async def _drain_audio(self) -> None:
        assert self._opening is not None
        try:
            await self._opening
            if self.session is None:
                return  # could not open; reported
            async for event in self.session:
                if self._wait_for_room is not None:
                    await self._wait_for_room()
                self._on_event(event)
        except TTSError as error:
            self._report(error)

    def _on_event(self, event: SessionEvent) -> None:
        if isinstance(event, WordsReceived):  # only when the request asked for timestamps
            index, _ = self._sentences.get(event.request_id, (self._last_sentence, ""))
            self._emit(self.builder.words(sentence=index, words=event.words))
        elif isinstance(event, AudioChunk):
            index, _ = self._sentences.get(event.request_id, (self._last_sentence, ""))
            self._last_sentence = index
            self.pcm_bytes += len(event.data)
            self._request_bytes[event.request_id] = self._request_bytes.get(event.request_id, 0) + len(
                event.data
            )
            encoded = self._encoder.encode(event.data)
            if encoded:
                self._emit_audio(encoded)
        elif isinstance(event, RequestStarted):
            if not self.audio_started:
                self.audio_started = True
                self._emit(self.builder.audio_start(format=self.options.format, sample_rate=SAMPLE_RATE))
        elif isinstance(event, RequestCompleted):
            index, text = self._sentences.pop(event.request_id, (self._last_sentence, ""))
            duration = self._request_bytes.pop(event.request_id, 0) / BYTES_PER_SECOND
            self._emit(self.builder.sentence_complete(sentence=index, text=text, duration_s=duration))
        elif isinstance(event, RequestFailed):
            if event.request_id is not None:
                self._sentences.pop(event.request_id, None)
            self._emit(self.builder.error(code=event.code, message=event.message))


class _Run:
    """One agent response in one mode: the shared queue, the tasks, and the final events."""

    def __init__(
        self,
        mode: Mode,
        agent: Agent,
        prompt: str,
        transport_factory: TransportFactory,
        options: VoiceOptions,
        request_id: str,
        *,
        connect_timeout: float,
        silence_timeout: float,
        max_request_chars: int,
        max_queued_events: int,
    ) -> None:
        self.mode = mode
        self.agent = agent
        self.prompt = prompt
        self.request_id = request_id
        self.max_request_chars = max_request_chars
        self.builder = EventBuilder()
        self.queue = _EventQueue(max_queued_events)
        self.speaker = Speaker(
            transport_factory,
            self.builder,
            self.queue.put_nowait,
            options,
            connect_timeout=connect_timeout,
            silence_timeout=silence_timeout,
            request_id_prefix=request_id[:12],
            wait_for_room=self.queue.wait_for_room,
        )
        self.text_ms: float | None = None
        self._text_seq = 0

    async def _text(self, data: str) -> None:
        # Waits for room like the audio does: a slow consumer slows the agent's text down too, but
        # never for ever (the consumer reads in order, so room comes).
        await self.queue.wait_for_room()
        event = self.builder.text_delta(seq=self._text_seq, text=data)
        self._text_seq += 1
        self.text_ms = event["t_ms"]
        self.queue.put_nowait(event)

    async def _agent_text(self) -> AsyncIterator[str]:
        async for event in self.agent.stream_async(self.prompt):
            data = event.get("data") if isinstance(event, dict) else None
            if isinstance(data, str) and data:
                await self._text(data)
                yield data

    async def _drain_text_bidi(self) -> None:
        chunker = IncrementalSentenceChunker()
        async for data in self._agent_text():
            for chunk in chunker.feed(data):
                await self.speaker.speak(chunk)
        for chunk in chunker.finish():
            await self.speaker.speak(chunk)

    async def _drain_text_batch(self) -> None:
        parts = [data async for data in self._agent_text()]
        for piece in split_for_requests(clean_for_speech("".join(parts)), self.max_request_chars):
            await self.speaker.speak(piece)

    async def _drain_text(self) -> None:
        try:
            if self.mode == "bidi":
                await self._drain_text_bidi()
            else:
                await self._drain_text_batch()
        except Exception:
            logger.exception("request_id=<%s> | the agent failed", self.request_id)
            self.queue.put_nowait(
                self.builder.error(code="agent_error", message="The agent failed to answer.")
            )
        # Not in a finally: on cancellation nothing more is sent; the session is closed instead.
        await self.speaker.finish()

    async def _produce(self) -> None:
        try:
            self.speaker.start()
            await self._drain_text()
            await self.speaker.wait()
            self.speaker.end_events()
        finally:
            self.queue.put_nowait(None)  # the consumer's end marker, whatever happened

    async def events(self) -> AsyncGenerator[Event, None]:
        yield self.builder.agent_start(mode=self.mode, request_id=self.request_id)
        producing = asyncio.create_task(self._produce(), name="voice-run")
        try:
            while (event := await self.queue.get()) is not None:
                yield event
            producing.result()  # a bug in the producer surfaces here rather than vanishing
            yield self.builder.agent_end(
                ttfa_ms=self.speaker.ttfa_ms, text_ms=self.text_ms, audio_ms=self.speaker.audio_ms
            )
        finally:
            # Also on caller disconnect (aclose, cancellation): nothing may outlive the generator.
            await _cancel_all([producing, *self.speaker.tasks])
            await self.speaker.aclose()


def _factory(
    tts_url: str | None, transport_factory: TransportFactory | None, connect_timeout: float
) -> TransportFactory:
    if transport_factory is not None:
        return transport_factory
    if tts_url is None:
        raise ValueError("give tts_url or transport_factory")
    url = tts_url
    return lambda: transport_from_url(url, connect_timeout=connect_timeout)


def run_voice(
    mode: Mode,
    agent: Agent,
    prompt: str,
    *,
    tts_url: str | None = None,
    options: VoiceOptions | None = None,
    request_id: str | None = None,
    transport_factory: TransportFactory | None = None,
    connect_timeout: float = 10.0,
    silence_timeout: float = 30.0,
    max_request_chars: int = DEFAULT_MAX_REQUEST_CHARS,
    max_queued_events: int = _MAX_QUEUED_EVENTS,
) -> AsyncGenerator[Event, None]:
    """Run ``agent`` on ``prompt`` and yield Leg 3 events, speaking in ``mode``.

    Args:
        mode: ``bidi`` (speak while the agent writes) or ``batch`` (speak the whole answer at the end).
        agent: The Strands agent; its own ``callback_handler`` still sees every event.
        prompt: The user's prompt.
        tts_url: The Leg 1 endpoint (``ws://…``, ``http://…`` or ``sagemaker://…``).
        options: Voice, speed and output format.
        request_id: The id in ``agent_start`` (a random one when None).
        transport_factory: Creates the transport instead of ``tts_url`` (tests, custom transports).
        connect_timeout: Seconds opening the TTS session may take.
        silence_timeout: Seconds the endpoint may stay silent while audio is owed.
        max_request_chars: Batch mode's per-request text limit (the endpoint's ``max_text_chars``).
        max_queued_events: Events held for a slow consumer before the run's tasks wait for it.

    Returns:
        An async generator of events; ``aclose()`` it (or stop iterating) to cancel everything.
    """
    if mode not in ("bidi", "batch"):
        raise ValueError(f"unknown mode {mode!r}; expected 'bidi' or 'batch'")
    run = _Run(
        mode,
        agent,
        prompt,
        _factory(tts_url, transport_factory, connect_timeout),
        options or VoiceOptions(),
        request_id or uuid.uuid4().hex,
        connect_timeout=connect_timeout,
        silence_timeout=silence_timeout,
        max_request_chars=max_request_chars,
        max_queued_events=max_queued_events,
    )
    return run.events()


def run_bidi(agent: Agent, prompt: str, **kwargs: Any) -> AsyncGenerator[Event, None]:
    """``run_voice("bidi", agent, prompt, **kwargs)``: speech starts with the first text chunk."""
    return run_voice("bidi", agent, prompt, **kwargs)


def run_batch(agent: Agent, prompt: str, **kwargs: Any) -> AsyncGenerator[Event, None]:
    """``run_voice("batch", agent, prompt, **kwargs)``: one synthesis request after the full answer."""
    return run_voice("batch", agent, prompt, **kwargs)
