"""``VoiceCallbackHandler``: give any ``strands.Agent`` a voice through its callback handler.

The handler IS the voice pipeline. For each agent response (one invocation, however many model turns
and tool calls it takes) it runs one :class:`~strands_voice.response.Response`: the text goes through
the incremental sentence chunker (``bidi``) or waits for the whole answer (``batch``), is spoken over ONE
Leg 1 TTS session, and comes back as Leg 3 events. ``mode``, ``voice``, ``speed`` and ``format`` are
set per handler and per request (:class:`~strands_voice.speaker.VoiceOptions` in ``invocation_state``).

Two ways to use it:

- As the agent's callback handler (``agent("...")`` or ``stream_async``): Strands calls it synchronously
  on the agent's loop; the handler never blocks it. Each response gets a worker thread with its own
  event loop, which owns the response's TTS session; the audio outlives ``agent()``'s own loop. Events
  reach the user through ``on_audio(bytes)``, ``on_event(event)`` (both on the worker thread) and
  ``handler.events()`` (an async iterator on the caller's loop).
- :meth:`VoiceCallbackHandler.stream` runs the agent and yields the whole Leg 3 stream (``agent_start``,
  ``text_delta`` … ``agent_end``) from one bounded queue, in arrival order, on the caller's loop: what
  an AgentCore entrypoint returns.

When the model stops to call a tool (or its message ends), the pending text is spoken at once, and text
of different model turns never shares a chunk; tool results and reasoning are never spoken. The TTS
session stays open across tool calls; its silence timeout counts only while audio is owed.

:meth:`VoiceCallbackHandler.interrupt` is barge-in, from any thread or loop: Leg 1 ``cancel``, the
undelivered audio dropped, the rest of the response not spoken, one ``interrupted`` event; and the agent
writing the answer (under :meth:`~VoiceCallbackHandler.stream`, the plugin, or as the agent's callback
handler) is cancelled: no more model tokens or tool calls, and its conversation keeps, as that answer,
exactly the ``interrupted.heard_text`` (what was PLAYED: :mod:`strands_voice.heard`), also when the model
had already finished writing (:mod:`strands_voice.answer_memory`).

Events per response: ``audio_start``, ``audio_chunk`` (``seq``, ``sentence``, base64 ``data``),
``sentence_complete``, ``error`` (speech failed; the text goes on), ``interrupted`` and always, last,
``audio_end``. ``t_ms`` counts from the response's start (``agent_start`` under :meth:`stream`).

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
import contextlib
import itertools
import logging
import threading
import uuid
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from strands.agent.agent import Agent as _Agent
from strands.handlers.callback_handler import CompositeCallbackHandler
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.chunker import IncrementalSentenceChunker
from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.events import Event, EventBuilder

from strands_voice.answer_memory import AnswerMemory
from strands_voice.event_queue import EventQueue
from strands_voice.response import Response
from strands_voice.speaker import DEFAULT_MAX_REQUEST_CHARS, Mode, TransportFactory, VoiceOptions
from strands_voice.transport_url import transport_from_url

if TYPE_CHECKING:
    from strands import Agent

__all__ = [
    "DEFAULT_MAX_QUEUED_EVENTS",
    "VOICE_OPTIONS_KEY",
    "EventStream",
    "VoiceCallbackHandler",
    "ends_model_turn",
]

logger = logging.getLogger(__name__)

#: ``invocation_state`` key for per-request options: ``agent("…", invocation_state={VOICE_OPTIONS_KEY:
#: VoiceOptions(mode="batch")})``. A mapping with ``mode``/``voice``/``speed``/``format`` works too.
VOICE_OPTIONS_KEY: Final = "voice_options"

#: Events :meth:`VoiceCallbackHandler.stream` holds for a slow consumer before the agent's text and the
#: session's audio wait for it (an ``audio_chunk`` of pcm16 is at most 24 kB of audio, 32 kB as base64).
DEFAULT_MAX_QUEUED_EVENTS: Final = 32

#: Seconds to wait for cancelled tasks to end before giving up on them.
_CANCEL_TIMEOUT: Final = 5.0

_OPTION_FIELDS: Final = ("mode", "voice", "speed", "format")


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def ends_model_turn(kwargs: Mapping[str, Any]) -> bool:
    """Whether a Strands callback event ends the model's current turn of text.

    True when the model starts a tool use (a ``toolUse`` content block, or ``current_tool_use``) and when
    a message ends (``messageStop``, or the completed ``message``).
    """
    if "current_tool_use" in kwargs or "message" in kwargs:
        return True
    event = kwargs.get("event")
    if not isinstance(event, Mapping):
        return False
    if "messageStop" in event:
        return True
    block = event.get("contentBlockStart")
    start = block.get("start") if isinstance(block, Mapping) else None
    return isinstance(start, Mapping) and "toolUse" in start


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


class _TextLog:
    """The ``text_delta`` events of one :meth:`VoiceCallbackHandler.stream` run."""

    def __init__(self) -> None:
        self.count = 0
        self.last_ms: float | None = None


class VoiceCallbackHandler:
    """A Strands callback handler that speaks the agent's text while it is generated.

    Args:
        tts_url: The Leg 1 endpoint (``ws://…``, ``http://…`` or ``sagemaker://…``).
        mode: Default mode: ``bidi`` (speak while the agent writes) or ``batch`` (speak once it is done).
        voice: Default voice (None: the endpoint's default).
        speed: Default speed (None: 1.0).
        format: Output audio format: ``pcm16`` (default), ``wav``, ``mp3`` or ``opus``.
        on_audio: Called with each piece of encoded audio, in order (on a worker thread).
        on_event: Called with every event (on a worker thread).
        transport_factory: Creates transports instead of ``tts_url``.
        chunker_factory: Creates the chunker of each response (default ``IncrementalSentenceChunker()``).
        connect_timeout: Seconds opening a TTS session may take.
        silence_timeout: Seconds the endpoint may stay silent while audio is owed.
        max_request_chars: ``batch`` mode's per-request text limit (the endpoint's ``max_text_chars``).
        max_queued_events: Events :meth:`stream` holds for a slow consumer before the run waits for it.

    Per request, options come from ``invocation_state[VOICE_OPTIONS_KEY]``, from :meth:`stream`'s
    ``options``, or from :meth:`set_request_options` (which applies to the next response only).
    """

    def __init__(
        self,
        tts_url: str | None = None,
        *,
        mode: Mode = "bidi",
        voice: str | None = None,
        speed: float | None = None,
        format: str = "pcm16",
        on_audio: Callable[[bytes], None] | None = None,
        on_event: Callable[[Event], None] | None = None,
        transport_factory: TransportFactory | None = None,
        chunker_factory: Callable[[], IncrementalSentenceChunker] | None = None,
        connect_timeout: float = 10.0,
        silence_timeout: float = 30.0,
        max_request_chars: int = DEFAULT_MAX_REQUEST_CHARS,
        max_queued_events: int = DEFAULT_MAX_QUEUED_EVENTS,
    ) -> None:
        if transport_factory is None:
            if tts_url is None:
                raise ConfigurationError("give tts_url or transport_factory")
            url = tts_url

            def transport_factory() -> Any:
                return transport_from_url(url, connect_timeout=connect_timeout)

        if max_queued_events < 1:
            raise ConfigurationError("max_queued_events must be at least 1")
        self._transport_factory: TransportFactory = transport_factory
        self._chunker_factory = chunker_factory or IncrementalSentenceChunker
        self.options = VoiceOptions(voice=voice, speed=speed, format=format, mode=mode)
        self.on_audio = on_audio
        self.on_event = on_event
        self.connect_timeout = connect_timeout
        self.silence_timeout = silence_timeout
        self.max_request_chars = max_request_chars
        self.max_queued_events = max_queued_events
        self._lock = threading.Lock()
        self._current: Response | None = None
        self._active: list[Response] = []
        self._threads: list[threading.Thread] = []
        self._async_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._subscribers: list[EventStream] = []
        self._next_options: VoiceOptions | None = None
        self._numbers = itertools.count(1)
        self._idle = threading.Condition(self._lock)
        self._closed = False

    # --- the Strands callback -------------------------------------------------------------------------

    def __call__(self, **kwargs: Any) -> None:
        """Strands' callback: ``data=`` deltas are spoken; a tool use or message end flushes the pending
        text; ``result=`` ends the response's text. Reasoning and tool results are never spoken."""
        try:
            data = kwargs.get("data")
            if isinstance(data, str) and data and not kwargs.get("reasoning"):
                self._text(data, kwargs.get(VOICE_OPTIONS_KEY), kwargs.get("agent"))
            if ends_model_turn(kwargs):
                with self._lock:
                    current = self._current
                if current is not None:
                    current.turn()
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
            fields = {k: v for k, v in requested.items() if k in _OPTION_FIELDS and v is not None}
            return replace(options, **fields)
        return options

    def _new_response(
        self,
        options: VoiceOptions,
        loop: asyncio.AbstractEventLoop,
        builder: EventBuilder,
        sink: Callable[[Event], None],
        **extra: Any,
    ) -> Response:
        return Response(
            options=options,
            loop=loop,
            transport_factory=self._transport_factory,
            chunker_factory=self._chunker_factory,
            builder=builder,
            sink=sink,
            connect_timeout=self.connect_timeout,
            silence_timeout=self.silence_timeout,
            max_request_chars=self.max_request_chars,
            **extra,
        )

    def _start_response(self, requested: Any, agent: Any = None) -> Response | None:
        """The current response, started on a worker thread if there is none. Holds the lock.

        ``agent``, when given (a Strands agent), is the one writing it: a barge-in cancels it.
        """
        if self._closed:
            return None
        if self._current is not None:
            self._remember(self._current, agent)
        if self._current is None:
            loop = asyncio.new_event_loop()
            response = self._new_response(
                self._resolve(requested), loop, EventBuilder(), self._deliver, track_on_emit=True
            )
            number = next(self._numbers)
            response.thread = threading.Thread(
                target=self._run_in_thread, args=(response,), name=f"voice-response-{number}", daemon=True
            )
            self._remember(response, agent)
            self._current = response
            self._active.append(response)
            self._threads.append(response.thread)
            response.thread.start()
        return self._current

    @staticmethod
    def _remember(response: Response, agent: Any) -> None:
        """Tie ``response`` to the agent writing it (once; callbacks name the agent in ``agent=``)."""
        if response.memory is None and isinstance(agent, _Agent):
            response.memory = AnswerMemory.bind(agent)

    def _run_in_thread(self, response: Response) -> None:
        loop = response.loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(loop.create_task(response.run(), name="voice-response"))
        except BaseException:  # cancellation or a bug: the worker must end either way
            logger.debug("voice response ended abnormally", exc_info=True)
        finally:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()
                self._response_finished(response)

    def _text(self, data: str, requested: Any, agent: Any = None) -> None:
        with self._lock:
            response = self._start_response(requested, agent)
            if response is not None:
                response.feed(data, agent)

    def _end_text(self, response: Response | None = None) -> None:
        """End the current response's text (only if it is ``response``, when given)."""
        with self._lock:
            current = self._current
            if current is None or (response is not None and current is not response):
                return
            self._current = None
        current.end()

    def begin_response(self, requested: Any = None, agent: Agent | None = None) -> None:
        """Start the next response now, before its first text, so its TTS session opens meanwhile.

        The connect (TLS and signing on SageMaker) then overlaps the model's time to first token.

        Args:
            requested: Per-request options (a ``VoiceOptions`` or a mapping), as in ``invocation_state``.
            agent: The agent about to write it (a barge-in then cancels it and fixes its memory).
        """
        with self._lock:
            self._start_response(requested, agent)

    def end_response(self) -> None:
        """No more text for the current response (idempotent; ``result=`` does the same)."""
        self._end_text()

    def interrupt(self) -> bool:
        """Barge-in: stop speaking every response in progress (any thread or loop; idempotent).

        Sends Leg 1 ``cancel`` on the response's open session, drops its audio not yet delivered, speaks
        none of the rest of that response, and emits one ``interrupted`` event (``heard_text``,
        ``sentences_done``, ``sentence_cut``: what had been PLAYED, at real-time speed from the first
        delivered chunk) followed, as always, by ``audio_end``. When the agent writing the response is
        known it is cancelled (``agent.cancel(message=heard_text)``: no more tokens, no further tool
        calls), and its last assistant message becomes the heard text, also when it had already finished
        writing (its session manager persists the rewrite).

        Returns:
            Whether a response was in progress (a second call still returns True; it does nothing more).
        """
        with self._lock:
            active = list(self._active)
        for response in active:
            response.interrupt()
        return bool(active)

    # --- the Leg 3 stream -----------------------------------------------------------------------------

    async def stream(
        self,
        agent: Agent,
        prompt: Any,
        *,
        options: VoiceOptions | Mapping[str, Any] | None = None,
        invocation_state: dict[str, Any] | None = None,
        request_id: str | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run ``agent`` on ``prompt`` and yield its Leg 3 events, speaking with this handler.

        ``text_delta`` events come from the agent's token stream, the speech events from this handler,
        through one bounded queue in arrival order, from ``agent_start`` to ``agent_end``. A slow consumer
        slows the agent's text and the reading of the audio down instead of having it buffered.

        The handler should be the agent's callback handler (or part of it: ``CompositeCallbackHandler``,
        :class:`~strands_voice.plugin.VoicePlugin`); if it is not, it is composed with the agent's own
        handler for the duration of the run. One response at a time per handler. The run's events go to
        this generator only (not to ``on_audio``, ``on_event`` or :meth:`events`).

        Args:
            agent: The Strands agent.
            prompt: The user's prompt (anything ``stream_async`` takes).
            options: This request's options (else ``invocation_state[VOICE_OPTIONS_KEY]``, else the
                handler's defaults).
            invocation_state: Passed to ``agent.stream_async``.
            request_id: The id in ``agent_start`` (a random one when None).

        Yields:
            Leg 3 events. Stop iterating (``aclose()``) to cancel the run; call :meth:`interrupt` first to
            barge in (the endpoint then sees ``cancel`` before the session closes).

        Raises:
            RuntimeError: The handler is closed, or already speaking a response.
        """
        rid = request_id or uuid.uuid4().hex
        state = dict(invocation_state or {})
        requested = options if options is not None else state.get(VOICE_OPTIONS_KEY)
        builder = EventBuilder()
        queue = EventQueue(self.max_queued_events)
        with self._lock:
            if self._closed:
                raise RuntimeError("the voice handler is closed")
            if self._current is not None:
                raise RuntimeError("the voice handler is already speaking a response")
            response = self._new_response(
                self._resolve(requested),
                asyncio.get_running_loop(),
                builder,
                queue.put_nowait,
                request_id_prefix=rid[:12],
                wait_for_room=queue.wait_for_room,
                purge=queue.purge,
            )
            response.memory = AnswerMemory.bind(agent)
            self._current = response
            self._active.append(response)
        text = _TextLog()
        producing: asyncio.Task[None] | None = None
        try:
            yield builder.agent_start(mode=response.options.mode, request_id=rid)
            producing = asyncio.create_task(
                self._produce(agent, prompt, state, response, queue, text), name="voice-run"
            )
            while (event := await queue.get()) is not None:
                response.delivered(event)
                yield event
            producing.result()  # a bug in the producer surfaces here rather than vanishing
            yield builder.agent_end(
                ttfa_ms=response.log.first_audio_ms, text_ms=text.last_ms, audio_ms=response.log.last_audio_ms
            )
        finally:
            # Also on caller disconnect (aclose, cancellation): nothing may outlive the generator.
            if producing is not None:
                if not producing.done():
                    await self._let_agent_stop(response, producing, queue)
                await cancel_and_wait([producing], _CANCEL_TIMEOUT)
                if producing.done() and not producing.cancelled():
                    producing.exception()  # retrieved (re-raised above when the run ended normally)
            self._end_text(response)
            self._response_finished(response)

    @staticmethod
    async def _let_agent_stop(response: Response, producing: asyncio.Task[None], queue: EventQueue) -> None:
        """The caller left mid-answer: barge in, and give the cancelled agent a moment to end its turn.

        The agent then keeps what was heard as its answer instead of losing the turn to a cancelled task
        (which would leave the user's message unanswered in its history). Nobody reads the queue any
        more: it is emptied so the producer never waits for room.
        """
        response.interrupt()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _CANCEL_TIMEOUT
        while not producing.done() and loop.time() < deadline:
            queue.purge(lambda _event: True)
            await asyncio.wait({producing}, timeout=0.05)

    async def _produce(
        self,
        agent: Agent,
        prompt: Any,
        state: dict[str, Any],
        response: Response,
        queue: EventQueue,
        text: _TextLog,
    ) -> None:
        """Drive the agent (its callback feeds ``response``) and queue its ``text_delta`` events."""
        speaking = asyncio.create_task(response.run(), name="voice-response")
        try:
            try:
                with self._attached(agent), self._finishing(response):
                    async for event in agent.stream_async(prompt, invocation_state=state):
                        data = event.get("data")
                        if isinstance(data, str) and data and not event.get("reasoning"):
                            # Waits for room like the audio does: a slow consumer slows the agent too.
                            await queue.wait_for_room()
                            delta = response.builder.text_delta(seq=text.count, text=data)
                            text.count += 1
                            text.last_ms = delta["t_ms"]
                            queue.put_nowait(delta)
            except Exception:
                logger.exception("the agent failed")
                queue.put_nowait(
                    response.builder.error(code="agent_error", message="The agent failed to answer.")
                )
            # Not in a finally: on cancellation nothing more is spoken; the session is closed instead.
            self._end_text(response)
            response.end()
            await speaking
        finally:
            await cancel_and_wait([speaking], _CANCEL_TIMEOUT)
            queue.put_nowait(None)  # the consumer's end marker, whatever happened

    @staticmethod
    @contextlib.contextmanager
    def _finishing(response: Response) -> Iterator[None]:
        """Tell the answer's memory that the agent's run ended, however it ended."""
        try:
            yield
        finally:
            if response.memory is not None:
                response.memory.finished()

    def _reaches(self, handler: Any) -> bool:
        if handler is self:
            return True
        if isinstance(handler, CompositeCallbackHandler):
            return any(self._reaches(inner) for inner in handler.handlers)
        return False

    @contextlib.contextmanager
    def _attached(self, agent: Agent) -> Iterator[None]:
        """This handler in ``agent``'s callback chain for the duration (composed with its own)."""
        own = agent.callback_handler
        if self._reaches(own):
            yield
            return
        agent.callback_handler = CompositeCallbackHandler(own, self)
        try:
            yield
        finally:
            agent.callback_handler = own

    # --- options and delivery -----------------------------------------------------------------------

    def set_request_options(
        self,
        *,
        mode: Mode | None = None,
        voice: str | None = None,
        speed: float | None = None,
        format: str | None = None,
    ) -> None:
        """Options for the next response only (unset fields keep the handler's defaults)."""
        fields: dict[str, Any] = {"mode": mode, "voice": voice, "speed": speed, "format": format}
        options = replace(self.options, **{k: v for k, v in fields.items() if v is not None})
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

    def _response_finished(self, response: Response) -> None:
        with self._idle:
            if response in self._active:
                self._active.remove(response)
            if self._current is response:
                self._current = None
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
        """Stop speaking, end every worker thread and end :meth:`events` streams. Safe to call twice.

        A :meth:`stream` in progress is cancelled too (its generator ends once its consumer resumes).
        """
        with self._lock:
            self._closed = True
            self._current = None
            active = list(self._active)
            subscribers = list(self._subscribers)
        for response in active:
            response.cancel()
        for response in active:
            if response.thread is not None and response.thread is not threading.current_thread():
                response.thread.join(timeout)
        with self._lock:
            threads, self._threads = self._threads, []
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(timeout)
        for stream in subscribers:
            stream._put(None)

    def __enter__(self) -> VoiceCallbackHandler:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
