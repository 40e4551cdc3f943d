"""The speaking core of a voice response: one TTS session turned into Leg 3 audio events.

:class:`Synthesis` sends text chunks over one :class:`~strands_voice.session.TTSSession` the moment they
are given (without waiting for earlier audio) and turns the session's audio into ``audio_start``,
``audio_chunk``, ``sentence_complete`` and ``error`` events. It is the part of
:class:`strands_voice.VoiceCallbackHandler`'s per-response pipeline (:mod:`strands_voice.speech._response`)
that talks to the endpoint; nothing else opens a session for an agent's answer.

Barge-in (:meth:`Synthesis.interrupt`) sends Leg 1 ``cancel`` for everything owed, drops every later audio
event of the session, and speaks nothing more.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.audio import BYTES_PER_SECOND, create_encoder, format_sample_rate
from strands_voice_protocol.errors import TTSError
from strands_voice_protocol.events import Event, EventBuilder

from strands_voice.session import (
    AudioChunk,
    RequestCancelled,
    RequestCompleted,
    RequestFailed,
    RequestRestarted,
    RequestStarted,
    SessionEvent,
    TTSSession,
    WordsReceived,
)
from strands_voice.speech._options import ResponseSettings, VoiceOptions

logger = logging.getLogger(__name__)

#: Seconds to wait for cancelled tasks to end before giving up on them (the handler's too).
CANCEL_TIMEOUT: Final = 5.0

#: Seconds a barge-in's Leg 1 ``cancel`` may take to send before the session is closed anyway.
_CANCEL_SEND_TIMEOUT: Final = 2.0


class Synthesis:
    """Speaks text chunks over one TTS session and turns its audio into Leg 3 events.

    All methods run on one event loop. Events go to ``emit`` as they happen, stamped by ``builder``.

    Args:
        settings: How the session reaches the endpoint (transport, timeouts).
        builder: Stamps events with ``t_ms``.
        emit: Receives each event (called on the loop; must not block).
        options: Voice, speed and output format.
        request_id_prefix: Prefix of the session's request ids.
        wait_for_room: Awaited before each session event is handled: a slow consumer of ``emit``'s
            events slows the reading of the session's audio (backpressure) instead of piling it up.

    A session with nothing owed (e.g. while the agent runs a tool) never times out for silence.
    """

    def __init__(
        self,
        settings: ResponseSettings,
        builder: EventBuilder,
        emit: Callable[[Event], None],
        options: VoiceOptions,
        *,
        request_id_prefix: str | None = None,
        wait_for_room: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.options = options
        self.builder = builder
        self._emit = emit
        self._wait_for_room = wait_for_room
        self._encoder = create_encoder(options.format)
        self._transport_factory = settings.transport_factory
        self._session_args: dict[str, Any] = {
            "voice": options.voice,
            "speed": options.speed,
            "connect_timeout": settings.connect_timeout,
            "silence_timeout": settings.silence_timeout,
            "request_id_prefix": request_id_prefix,
        }
        self.session: TTSSession | None = None
        self._opening: asyncio.Task[None] | None = None
        self._receiving: asyncio.Task[None] | None = None
        self._cancelling: asyncio.Task[None] | None = None
        self._sentences: dict[str, tuple[int, str]] = {}  # request_id -> (index, text)
        self._request_bytes: dict[str, int] = {}
        self._next_sentence = 0
        self._last_sentence = 0
        self._pending_pcm = 0  # pcm bytes encoded since the last audio_chunk
        self._finishing = False  # finish() was called: the session's end is ours
        self._idle_closed = False  # the endpoint closed the session while nothing was owed
        self.failed = False
        self.silenced = False
        self._silenced = asyncio.Event()  # set by a barge-in: nothing owed is waited for any more
        self.audio_started = False
        self.chunks = 0
        self.pcm_bytes = 0
        #: pcm bytes each ``audio_chunk`` carries, by its ``seq`` (encoders may hold audio back).
        self.chunk_pcm: list[int] = []

    @property
    def tasks(self) -> list[asyncio.Task[None]]:
        """The speaker's own tasks (for tests and shutdown)."""
        return [task for task in (self._opening, self._receiving, self._cancelling) if task is not None]

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
        """The open session (a new one if the endpoint closed the last while idle), or None once speech
        has failed."""
        if self._idle_closed and not self._finishing:
            # E.g. its idle timeout during a long tool call: the next chunk opens a new session.
            self._idle_closed = False
            self._opening = None
        if self._opening is None:
            self.start()
        assert self._opening is not None
        await asyncio.shield(self._opening)
        return None if self.failed else self.session

    async def speak(self, text: str) -> None:
        """Send one chunk for synthesis now (a no-op once speech has failed or was interrupted)."""
        if not text.strip() or self.silenced:
            return
        index = self._next_sentence
        self._next_sentence += 1
        for attempt in (1, 2):
            session = await self._ready()
            if session is None or self.silenced:
                return
            rid = session.new_request_id()
            self._sentences[rid] = (index, text)
            try:
                await session.synthesize(
                    text,
                    request_id=rid,
                    normalize=self.options.normalize,
                    timestamps=self.options.timestamps or None,
                    lang=self.options.lang,
                    lexicon=self.options.lexicon,
                )
                return
            except TTSError as error:
                self._sentences.pop(rid, None)
                if attempt == 1 and await self._closed_while_idle():
                    continue  # the endpoint had just closed the idle session: say it on a new one
                self._report(error)
                return

    async def _closed_while_idle(self) -> bool:
        """After a failed send: whether the endpoint had closed the session for idleness (so a new one
        may be opened), once the audio task has noticed."""
        if self._receiving is None or self._finishing:
            return False
        await asyncio.wait({self._receiving}, timeout=_CANCEL_SEND_TIMEOUT)
        return self._idle_closed

    def interrupt(self) -> None:
        """Barge-in: speak nothing more, drop every later audio event, send Leg 1 ``cancel`` (on the loop).

        The cancel is sent in the background; :meth:`finish` and :meth:`aclose` wait for it first, so
        the endpoint always sees ``cancel`` before ``close``.
        """
        if self.silenced:
            return
        self.silenced = True
        self._silenced.set()
        if self.session is not None and self.session.is_open and not self.failed:
            self._cancelling = asyncio.create_task(self._send_cancel(self.session), name="voice-cancel")

    async def _send_cancel(self, session: TTSSession) -> None:
        try:
            await session.cancel()
        except TTSError:
            logger.debug("cancel not sent: the session is gone")

    async def _cancel_sent(self) -> None:
        if self._cancelling is not None:
            await asyncio.wait({self._cancelling}, timeout=_CANCEL_SEND_TIMEOUT)

    async def finish(self) -> None:
        """No more text: the session ends once the owed audio has arrived (or been cancelled)."""
        self._finishing = True
        if self._idle_closed:
            return  # the endpoint already closed the idle session, and nothing was said since
        session = await self._ready()
        await self._cancel_sent()
        if session is not None:
            with contextlib.suppress(TTSError):
                await session.finish()

    async def wait(self) -> None:
        """Wait until all owed audio has been emitted (or speech failed), or a barge-in: then nothing owed
        is waited for (the endpoint may take a while to let the session go; :meth:`aclose` closes it)."""
        if self._receiving is None or self.silenced:
            return
        barge_in = asyncio.create_task(self._silenced.wait(), name="voice-barge-in")
        try:
            await asyncio.wait([self._receiving, barge_in], return_when=asyncio.FIRST_COMPLETED)
        finally:
            barge_in.cancel()

    def flush_encoder(self) -> None:
        """Emit the encoder's tail, if it holds one (dropped after a barge-in)."""
        tail = b"" if self.silenced else self._encoder.flush()
        if tail:
            self._emit_audio(tail)

    async def aclose(self) -> None:
        """Cancel the speaker's tasks and close the session (a barge-in's cancel is sent first)."""
        await self._cancel_sent()
        await cancel_and_wait(self.tasks, CANCEL_TIMEOUT)
        for task in self.tasks:
            if task.done() and not task.cancelled():
                task.exception()  # retrieved: the error was already reported as an event
        if self.session is not None:
            await self.session.close()

    def _emit_audio(self, data: bytes) -> None:
        event = self.builder.audio_chunk(seq=self.chunks, sentence=self._last_sentence, data=data)
        self.chunks += 1
        self.chunk_pcm.append(self._pending_pcm)
        self._pending_pcm = 0
        self._emit(event)

    async def _drain_audio(self) -> None:
        assert self._opening is not None
        try:
            await self._opening
            session = self.session
            if session is None:
                return  # could not open; reported
            async for event in session:
                if self._wait_for_room is not None and not self.silenced:
                    await self._wait_for_room()
                self._on_event(event)
            if not self._finishing:
                # The endpoint closed the session normally with nothing owed (its idle timeout, while
                # the agent ran a long tool): not a failure; the next chunk opens a new session.
                logger.debug("the endpoint closed the idle TTS session")
                self._idle_closed = True
                self.session = None
                await session.close()
        except TTSError as error:
            if not self.silenced:
                self._report(error)

    def _on_event(self, event: SessionEvent) -> None:
        if self.silenced:
            return  # barge-in: nothing of this session is delivered any more
        if isinstance(event, AudioChunk):
            index, _ = self._sentences.get(event.request_id, (self._last_sentence, ""))
            self._last_sentence = index
            self.pcm_bytes += len(event.data)
            self._pending_pcm += len(event.data)
            self._request_bytes[event.request_id] = self._request_bytes.get(event.request_id, 0) + len(
                event.data
            )
            encoded = self._encoder.encode(event.data)
            if encoded:
                self._emit_audio(encoded)
        elif isinstance(event, RequestStarted):
            if not self.audio_started:
                self.audio_started = True
                self._emit(
                    self.builder.audio_start(
                        format=self.options.format, sample_rate=format_sample_rate(self.options.format)
                    )
                )
        elif isinstance(event, RequestCompleted):
            index, text = self._sentences.pop(event.request_id, (self._last_sentence, ""))
            duration = self._request_bytes.pop(event.request_id, 0) / BYTES_PER_SECOND
            self._emit(self.builder.sentence_complete(sentence=index, text=text, duration_s=duration))
        elif isinstance(event, WordsReceived):  # only when the request asked for timestamps
            index, _ = self._sentences.get(event.request_id, (self._last_sentence, ""))
            self._emit(self.builder.words(sentence=index, words=event.words))
        elif isinstance(event, RequestRestarted):
            # The connection dropped mid-sentence and the endpoint could not resume at a sample, so the
            # session replays it whole: its audio so far is void (a player drops it), and the sentence's
            # and the answer's durations count the replay only.
            index, _ = self._sentences.get(event.request_id, (self._last_sentence, ""))
            self._request_bytes.pop(event.request_id, None)
            self.pcm_bytes -= event.dropped_bytes  # audio_end.duration_s: what the listener gets
            self._emit(
                self.builder.sentence_restart(
                    sentence=index, dropped_s=event.dropped_bytes / BYTES_PER_SECOND
                )
            )
        elif isinstance(event, RequestCancelled):
            self._sentences.pop(event.request_id, None)
        elif isinstance(event, RequestFailed):
            if event.request_id is not None:
                self._sentences.pop(event.request_id, None)
            self._emit(self.builder.error(code=event.code, message=event.message))
