"""``VoiceCallbackHandler``: give any ``strands.Agent`` a voice through its callback handler.

Strands calls a callback handler synchronously: on the agent's worker thread (with its own event loop)
under ``agent("...")``, on the caller's loop under ``await agent.stream_async(...)``. The handler never
blocks either: each agent response gets a worker thread with its own event loop, which owns the one TTS
session of that response; text deltas are handed over with ``loop.call_soon_threadsafe``. The worker
feeds the incremental chunker, sends each chunk at once, turns the audio into Leg 3 shaped events and
ends (closing its session) after the last audio.

Audio reaches the user in any of three ways, all optional: ``on_audio(bytes)`` (encoded audio, in
order), ``on_event(event)`` (every event), and ``handler.events()`` (an async iterator, on the caller's
own loop). Callbacks run on the response's worker thread.

Events per response: ``audio_start``, ``audio_chunk`` (``seq``, ``sentence``, base64 ``data``),
``sentence_complete``, ``error`` (speech failed; the text goes on) and always, last, ``audio_end``.
``t_ms`` counts from the response's first text.

Example:
    ```python
    from strands.handlers.callback_handler import CompositeCallbackHandler, PrintingCallbackHandler

    voice = VoiceCallbackHandler("ws://127.0.0.1:8080/invocations-bidirectional-stream", on_audio=play)
    agent = Agent(callback_handler=CompositeCallbackHandler(PrintingCallbackHandler(), voice))
    agent("Tell me about the Premium plan.")
    voice.wait()  # until the last audio has been delivered
    voice.close()
    ```
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import TracebackType
from typing import Any, Final

from strands_voice.audio import BYTES_PER_SECOND
from strands_voice.chunker import IncrementalSentenceChunker
from strands_voice.connect import transport_from_url
from strands_voice.events import Event, EventBuilder
from strands_voice.modes import Speaker, TransportFactory, VoiceOptions

__all__ = ["VOICE_OPTIONS_KEY", "EventStream", "VoiceCallbackHandler"]

logger = logging.getLogger(__name__)

#: ``invocation_state`` key for per-request options: ``agent("…", invocation_state={VOICE_OPTIONS_KEY:
#: VoiceOptions(voice="af_heart")})``. A mapping with ``voice``/``speed``/``format`` works too.
VOICE_OPTIONS_KEY: Final = "voice_options"


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class EventStream:
    """An async iterator of the handler's events on the loop that created it.

    Subscribed as soon as it is created (so nothing is missed between creating it and iterating).
    It ends when the handler is closed, or after the next ``audio_end`` when ``until_audio_end``.
    """

    def __init__(self, handler: VoiceCallbackHandler, *, until_audio_end: bool) -> None:
        self._handler = handler
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._until_audio_end = until_audio_end
        self._ended = False
        handler._subscribe(self)

    def _put(self, event: Event | None) -> None:
        """Called from any thread."""
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, event)
        except RuntimeError:  # the consumer's loop is closed: nobody listens any more
            self._handler._unsubscribe(self)

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> Event:
        if self._ended:
            raise StopAsyncIteration
        event = await self._queue.get()
        if event is None or (self._until_audio_end and event["type"] == "audio_end"):
            self.close()
            if event is None:
                raise StopAsyncIteration
        return event

    def close(self) -> None:
        """Stop receiving events."""
        self._ended = True
        self._handler._unsubscribe(self)


class _Response:
    """One agent response: a worker thread with its own loop, owning one TTS session."""

    def __init__(self, handler: VoiceCallbackHandler, options: VoiceOptions, number: int) -> None:
        self.handler = handler
        self.options = options
        self.loop = asyncio.new_event_loop()
        self.inbox: asyncio.Queue[str | None] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self.thread = threading.Thread(target=self._main, name=f"voice-response-{number}", daemon=True)
        self.finished = threading.Event()
        self.thread.start()

    def _call(self, callback: Callable[..., Any], *args: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:
            logger.debug("response already ended; text dropped")

    def feed(self, text: str) -> None:
        """Hand a text delta to the worker (any thread, never blocks)."""
        self._call(self.inbox.put_nowait, text)

    def end(self) -> None:
        """No more text for this response."""
        self._call(self.inbox.put_nowait, None)

    def cancel(self) -> None:
        """Stop speaking now."""
        self._call(self._cancel_task)

    def _cancel_task(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.task = self.loop.create_task(self._run(), name="voice-response")
            self.loop.run_until_complete(self.task)
        except BaseException:  # cancellation or a bug: the worker must end either way
            logger.debug("voice response ended abnormally", exc_info=True)
        finally:
            try:
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            finally:
                self.loop.close()
                self.finished.set()
                self.handler._response_finished(self)

    async def _run(self) -> None:
        handler = self.handler
        speaker = Speaker(
            handler._transport_factory,
            EventBuilder(),
            handler._deliver,
            self.options,
            connect_timeout=handler.connect_timeout,
            silence_timeout=handler.silence_timeout,
        )
        chunker = handler._chunker_factory()
        speaker.start()
        ended = False
        try:
            while (text := await self.inbox.get()) is not None:
                for chunk in chunker.feed(text):
                    await speaker.speak(chunk)
            for chunk in chunker.finish():
                await speaker.speak(chunk)
            await speaker.finish()
            await speaker.wait()
            speaker.end_events()  # audio_end, when audio started
            ended = speaker.audio_started
        finally:
            await speaker.aclose()
            if not ended:
                # Every response ends with audio_end, even when speech failed or was stopped.
                duration = speaker.pcm_bytes / BYTES_PER_SECOND
                handler._deliver(speaker.builder.audio_end(chunks=speaker.chunks, duration_s=duration))


class VoiceCallbackHandler:
    """A Strands callback handler that speaks the agent's text while it is generated.

    Args:
        tts_url: The Leg 1 endpoint (``ws://…``, ``http://…`` or ``sagemaker://…``).
        voice: Default voice (None: the endpoint's default).
        speed: Default speed (None: 1.0).
        format: Output audio format: ``pcm16`` (default), ``wav``, ``mp3`` or ``opus``.
        on_audio: Called with each piece of encoded audio, in order (on a worker thread).
        on_event: Called with every event (on a worker thread).
        transport_factory: Creates transports instead of ``tts_url``.
        chunker_factory: Creates the chunker of each response (default ``IncrementalSentenceChunker()``).
        connect_timeout: Seconds opening a TTS session may take.
        silence_timeout: Seconds the endpoint may stay silent while audio is owed.

    Per request, options come from ``invocation_state[VOICE_OPTIONS_KEY]`` or from
    :meth:`set_request_options` (which applies to the next response only).
    """

    def __init__(
        self,
        tts_url: str | None = None,
        *,
        voice: str | None = None,
        speed: float | None = None,
        format: str = "pcm16",
        on_audio: Callable[[bytes], None] | None = None,
        on_event: Callable[[Event], None] | None = None,
        transport_factory: TransportFactory | None = None,
        chunker_factory: Callable[[], IncrementalSentenceChunker] | None = None,
        connect_timeout: float = 10.0,
        silence_timeout: float = 30.0,
    ) -> None:
        if transport_factory is None:
            if tts_url is None:
                raise ValueError("give tts_url or transport_factory")
            url = tts_url

            def transport_factory() -> Any:
                return transport_from_url(url, connect_timeout=connect_timeout)

        self._transport_factory: TransportFactory = transport_factory
        self._chunker_factory = chunker_factory or IncrementalSentenceChunker
        self.options = VoiceOptions(voice=voice, speed=speed, format=format)
        self.on_audio = on_audio
        self.on_event = on_event
        self.connect_timeout = connect_timeout
        self.silence_timeout = silence_timeout
        self._lock = threading.Lock()
        self._current: _Response | None = None
        self._active: list[_Response] = []
        self._threads: list[threading.Thread] = []
        self._async_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._subscribers: list[EventStream] = []
        self._next_options: VoiceOptions | None = None
        self._numbers = itertools.count(1)
        self._idle = threading.Condition(self._lock)
        self._closed = False

    # --- the Strands callback -------------------------------------------------------------------------

    def __call__(self, **kwargs: Any) -> None:
        """Strands' callback: ``data=`` deltas are spoken; ``result=`` ends the response's text."""
        try:
            data = kwargs.get("data")
            if isinstance(data, str) and data and not kwargs.get("reasoning"):
                self._text(data, kwargs.get(VOICE_OPTIONS_KEY))
            if "result" in kwargs:
                self._end_text()
        except Exception:
            # Speech must never break the agent.
            logger.exception("voice callback failed")

    def _resolve(self, requested: Any) -> VoiceOptions:
        options = self._next_options or self.options
        self._next_options = None
        if isinstance(requested, VoiceOptions):
            return requested
        if isinstance(requested, Mapping):
            fields = {
                k: v for k, v in requested.items() if k in ("voice", "speed", "format") and v is not None
            }
            return replace(options, **fields)
        return options

    def _start_response(self, requested: Any) -> _Response | None:
        """The current response, started (and its TTS session opening) if there is none. Holds the lock."""
        if self._closed:
            return None
        if self._current is None:
            self._current = _Response(self, self._resolve(requested), next(self._numbers))
            self._active.append(self._current)
            self._threads.append(self._current.thread)
        return self._current

    def _text(self, data: str, requested: Any) -> None:
        with self._lock:
            response = self._start_response(requested)
            if response is not None:
                response.feed(data)

    def _end_text(self) -> None:
        with self._lock:
            response, self._current = self._current, None
        if response is not None:
            response.end()

    def begin_response(self, requested: Any = None) -> None:
        """Start the next response now, before its first text, so its TTS session opens meanwhile.

        The connect (TLS and signing on SageMaker) then overlaps the model's time to first token.

        Args:
            requested: Per-request options (a ``VoiceOptions`` or a mapping), as in ``invocation_state``.
        """
        with self._lock:
            self._start_response(requested)

    def end_response(self) -> None:
        """No more text for the current response (idempotent; ``result=`` does the same)."""
        self._end_text()

    # --- options and delivery -----------------------------------------------------------------------

    def set_request_options(
        self, *, voice: str | None = None, speed: float | None = None, format: str | None = None
    ) -> None:
        """Options for the next response only (unset fields keep the handler's defaults)."""
        base = self.options
        options = VoiceOptions(
            voice=base.voice if voice is None else voice,
            speed=base.speed if speed is None else speed,
            format=base.format if format is None else format,
        )
        with self._lock:
            self._next_options = options

    def events(self, *, until_audio_end: bool = False) -> EventStream:
        """Subscribe to events on the calling loop (call from a coroutine).

        Args:
            until_audio_end: End after the next ``audio_end`` (one response) instead of at :meth:`close`.
        """
        return EventStream(self, until_audio_end=until_audio_end)

    def _subscribe(self, stream: EventStream) -> None:
        with self._lock:
            self._subscribers.append(stream)

    def _unsubscribe(self, stream: EventStream) -> None:
        with self._lock:
            if stream in self._subscribers:
                self._subscribers.remove(stream)

    def _deliver(self, event: Event) -> None:
        """Hand an event to the user's callbacks and subscribers (on a response's worker thread)."""
        if self.on_audio is not None and event["type"] == "audio_chunk":
            try:
                self.on_audio(base64.b64decode(event["data"]))
            except Exception:
                logger.exception("on_audio callback failed")
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:
                logger.exception("on_event callback failed")
        with self._lock:
            subscribers = list(self._subscribers)
        for stream in subscribers:
            stream._put(event)

    # --- lifecycle ------------------------------------------------------------------------------------

    def _response_finished(self, response: _Response) -> None:
        with self._idle:
            if response in self._active:
                self._active.remove(response)
            self._idle.notify_all()
            waiters = [] if self._active else self._async_waiters
            if waiters:
                self._async_waiters = []
        for loop, done in waiters:
            try:
                loop.call_soon_threadsafe(_resolve, done)
            except RuntimeError:
                pass  # that loop is closed

    @property
    def speaking(self) -> bool:
        """True while any response still has text or audio in flight."""
        with self._lock:
            return bool(self._active)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every response's audio has been delivered and its session closed.

        Returns:
            False if ``timeout`` passed first.
        """
        with self._idle:
            if not self._idle.wait_for(lambda: not self._active, timeout):
                return False
            threads, self._threads = self._threads, []
        for thread in threads:
            thread.join()  # already past its last step: returns at once
        return True

    async def wait_async(self) -> None:
        """:meth:`wait` for coroutines, not blocking the calling loop (bound it with ``asyncio.timeout``)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if not self._active:
                return
            self._async_waiters.append((loop, done))
        try:
            await done
        finally:
            with self._lock:
                if (loop, done) in self._async_waiters:
                    self._async_waiters.remove((loop, done))
        self.wait()  # every worker has finished: this only joins ended threads

    def close(self, timeout: float = 5.0) -> None:
        """Stop speaking, end every worker thread and end :meth:`events` streams. Safe to call twice."""
        with self._lock:
            self._closed = True
            self._current = None
            active = list(self._active)
            subscribers = list(self._subscribers)
        for response in active:
            response.cancel()
        for response in active:
            response.thread.join(timeout)
        with self._lock:
            threads, self._threads = self._threads, []
        for thread in threads:
            thread.join(timeout)
        for stream in subscribers:
            stream._put(None)

    def __enter__(self) -> VoiceCallbackHandler:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
