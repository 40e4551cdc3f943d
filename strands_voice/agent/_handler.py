"""``VoiceCallbackHandler``: give any ``strands.Agent`` a voice through its callback handler.

The handler IS the voice pipeline. For each agent response (one invocation, however many model steps
and tool calls it takes) it runs one :class:`~strands_voice.speech.Response`: the text goes through
the incremental sentence chunker (``bidi``) or waits for the whole answer (``batch``), is spoken over ONE
Leg 1 TTS session, and comes back as Leg 3 events. How it is spoken is one
:class:`~strands_voice.speech.VoiceOptions`: the handler's defaults (``options=``), replaced for one
request by another (``invocation_state[VOICE_OPTIONS_KEY]``, or :meth:`~VoiceCallbackHandler.stream`'s
``options``).

Two ways to use it:

- As the agent's callback handler (``agent("...")`` or ``stream_async``): Strands calls it synchronously
  on the agent's loop; the handler never blocks it. Each response gets a worker thread with its own
  event loop (:mod:`strands_voice.agent._workers`: the handler's only threads), which owns the response's
  TTS session; the audio outlives ``agent()``'s own loop.
- :meth:`VoiceCallbackHandler.stream` runs the agent and yields the whole Leg 3 stream (``agent_start``,
  ``text_delta`` … ``agent_end``) from one bounded queue, in arrival order, on the caller's loop: what
  an AgentCore entrypoint returns.

Either way the events leave through ONE stream (:mod:`strands_voice.speech._event_stream`), which
``on_audio(bytes)``, ``on_event(event)`` and ``handler.events()`` (an async iterator) read as views:
under ``stream()`` they see each event as it is yielded, ``agent_start`` to ``agent_end``.

When the model stops to call a tool (or its message ends), the pending text is spoken at once, and text
of different model steps never shares a chunk; tool results and reasoning are never spoken. The TTS
session stays open across tool calls; its silence timeout counts only while audio is owed.

:meth:`VoiceCallbackHandler.interrupt` is barge-in, from any thread or loop: Leg 1 ``cancel``, the
undelivered audio dropped, the rest of the response not spoken, one ``interrupted`` event; and the agent
writing the answer (under :meth:`~VoiceCallbackHandler.stream`, the plugin, or as the agent's callback
handler) is cancelled: no more model tokens or tool calls, and its conversation keeps, as that answer,
exactly the ``interrupted.heard_text`` (what was PLAYED: ``speech._heard``), also when the model
had already finished writing (:mod:`strands_voice.agent._answer_memory`).

Events per response: ``audio_start``, ``audio_chunk`` (``seq``, ``sentence``, base64 ``data``),
``sentence_complete``, ``error`` (speech failed; the text goes on), ``interrupted`` and always, last,
``audio_end``. ``t_ms`` counts from the response's start (``agent_start`` under :meth:`stream`).

Example:
    ```python
    from strands.handlers.callback_handler import CompositeCallbackHandler, PrintingCallbackHandler

    url = "ws://127.0.0.1:8080/invocations-bidirectional-stream"
    voice = VoiceCallbackHandler(url, options=VoiceOptions(voice="af_heart"), on_audio=play)
    agent = Agent(callback_handler=CompositeCallbackHandler(PrintingCallbackHandler(), voice))
    agent("Tell me about the Premium plan.")
    voice.wait()  # until the last audio has been delivered
    voice.close()
    ```
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from strands.agent.agent import Agent as _Agent
from strands_voice_protocol.chunker import IncrementalSentenceChunker
from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.events import Event
from strands_voice_protocol.limits import MAX_TEXT_CHARS

from strands_voice._closing import ClosedOnExit
from strands_voice.agent._agent_run import AgentRun, close_run, produce
from strands_voice.agent._answer_memory import AnswerMemories
from strands_voice.agent._live_controls import LiveControls
from strands_voice.agent._workers import ActiveResponses
from strands_voice.session import SILENCE_TIMEOUT_S
from strands_voice.speech import (
    VOICE_OPTIONS_KEY,
    Chunker,
    EventHub,
    EventQueue,
    EventStream,
    Response,
    ResponseSettings,
    TransportFactory,
    VoiceOptions,
    request_options,
)
from strands_voice.transports import CONNECT_TIMEOUT_S, transport_from_url

if TYPE_CHECKING:
    from strands import Agent

__all__ = ["DEFAULT_MAX_QUEUED_EVENTS", "VoiceCallbackHandler", "ends_model_step"]

logger = logging.getLogger(__name__)

#: Events :meth:`VoiceCallbackHandler.stream` holds for a slow consumer before the agent's text and the
#: session's audio wait for it (an ``audio_chunk`` of pcm16 is at most 24 kB of audio, 32 kB as base64).
DEFAULT_MAX_QUEUED_EVENTS: Final = 32


def ends_model_step(kwargs: Mapping[str, Any]) -> bool:
    """Whether a Strands callback event ends the model's current step of text.

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


class VoiceCallbackHandler(LiveControls, ClosedOnExit):
    """A Strands callback handler that speaks the agent's text while it is generated.

    Args:
        tts_url: The Leg 1 endpoint (``ws://…``, ``http://…`` or ``sagemaker://…``).
        options: How responses are spoken unless a request gives its own (default ``VoiceOptions()``:
            ``bidi``, the endpoint's voice and speed, ``pcm16``).
        on_audio: Called with each piece of encoded audio, in order (a view of the event stream).
        on_event: Called with every event (a view of the event stream).
        transport_factory: Creates transports instead of ``tts_url``.
        chunker_factory: Creates the chunker of each response (default ``IncrementalSentenceChunker()``).
        connect_timeout: Seconds opening a TTS session may take.
        silence_timeout: Seconds the endpoint may stay silent while audio is owed.
        max_request_chars: ``batch`` mode's per-request text limit (the endpoint's ``max_text_chars``).
        max_queued_events: Events :meth:`stream` holds for a slow consumer before the run waits for it.

    A request's own options are a whole :class:`~strands_voice.speech.VoiceOptions`, from
    ``invocation_state[VOICE_OPTIONS_KEY]`` or :meth:`stream`'s ``options``.
    """

    def __init__(
        self,
        tts_url: str | None = None,
        *,
        options: VoiceOptions | None = None,
        on_audio: Callable[[bytes], None] | None = None,
        on_event: Callable[[Event], None] | None = None,
        transport_factory: TransportFactory | None = None,
        chunker_factory: Callable[[], Chunker] = IncrementalSentenceChunker,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        silence_timeout: float = SILENCE_TIMEOUT_S,
        max_request_chars: int = MAX_TEXT_CHARS,
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
        self.options = options if options is not None else VoiceOptions()
        self.settings = ResponseSettings(
            transport_factory, chunker_factory, connect_timeout, silence_timeout, max_request_chars
        )
        self.max_queued_events = max_queued_events
        #: Called with each piece of encoded audio, in order, where the event is published.
        self.on_audio = on_audio
        #: Called with every event, in order, where it is published.
        self.on_event = on_event
        self._hub = EventHub(self)
        self._responses = ActiveResponses()
        self._memories = AnswerMemories()

    # --- the Strands callback -------------------------------------------------------------------------

    def __call__(self, **kwargs: Any) -> None:
        """Strands' callback: ``data=`` deltas are spoken; a tool use or message end flushes the pending
        text; ``result=`` ends the response's text. Reasoning and tool results are never spoken."""
        try:
            data = kwargs.get("data")
            if isinstance(data, str) and data and not kwargs.get("reasoning"):
                agent = kwargs.get("agent")
                response = self._responses.current_or_start(
                    lambda: self._new_response(kwargs.get(VOICE_OPTIONS_KEY), agent)
                )
                if response is not None:
                    response.feed(data, agent)
            if ends_model_step(kwargs):
                current = self._responses.current
                if current is not None:
                    current.step_ended()
            if "result" in kwargs:
                self.end_response()
        except Exception:
            # Speech must never break the agent.
            logger.exception("voice callback failed")

    def _new_response(self, requested: object, agent: Any = None) -> Response:
        """A response on a new loop (for a worker thread), tied to ``agent`` when it is a Strands agent."""
        memory = self._memories.bind(agent) if isinstance(agent, _Agent) else None
        options = request_options(requested, self.options)
        return Response(options, asyncio.new_event_loop(), self.settings, self._hub, memory=memory)

    def begin_response(self, requested: VoiceOptions | None = None, agent: Agent | None = None) -> None:
        """Start the next response now, before its first text, so its TTS session opens meanwhile.

        The connect (TLS and signing on SageMaker) then overlaps the model's time to first token.

        Args:
            requested: This request's options (else the handler's), as in ``invocation_state``.
            agent: The agent about to write it (a barge-in then cancels it and fixes its memory; give it
                here, as the plugin does: a response started without it does not learn it later).
        """
        self._responses.current_or_start(lambda: self._new_response(requested, agent))

    def end_response(self) -> None:
        """No more text for the current response (idempotent; ``result=`` does the same)."""
        current = self._responses.take_current()
        if current is not None:
            current.end()

    # --- the Leg 3 stream -----------------------------------------------------------------------------

    async def stream(
        self,
        agent: Agent,
        prompt: Any,
        *,
        options: VoiceOptions | None = None,
        invocation_state: dict[str, Any] | None = None,
        request_id: str | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run ``agent`` on ``prompt`` and yield its Leg 3 events, speaking with this handler.

        ``text_delta`` events come from the agent's token stream, the speech events from this handler,
        through one bounded queue in arrival order, from ``agent_start`` to ``agent_end``. A slow consumer
        slows the agent's text and the reading of the audio down instead of having it buffered. Each
        event is also published to the handler's views (``on_audio``, ``on_event``, :meth:`events`) as
        it is yielded.

        The handler should be the agent's callback handler (or part of it: ``CompositeCallbackHandler``,
        :class:`~strands_voice.agent.VoicePlugin`); if it is not, it is composed with the agent's own
        handler for the duration of the run. One response at a time per handler.

        Args:
            agent: The Strands agent.
            prompt: The user's prompt (anything ``stream_async`` takes).
            options: This request's options (else ``invocation_state[VOICE_OPTIONS_KEY]``, else the
                handler's).
            invocation_state: Passed to ``agent.stream_async``.
            request_id: The id in ``agent_start`` (a random one when None).

        Yields:
            Leg 3 events. Stop iterating (``aclose()``) to cancel the run; call :meth:`interrupt` first to
            barge in (the endpoint then sees ``cancel`` before the session closes).

        Raises:
            RuntimeError: The handler is closed, or already speaking a response.
            ConfigurationError: The request's options are not a ``VoiceOptions``.
        """
        rid = request_id or uuid.uuid4().hex
        state = dict(invocation_state or {})
        requested = request_options(
            options if options is not None else state.get(VOICE_OPTIONS_KEY), self.options
        )
        queue = EventQueue(self.max_queued_events)
        loop = asyncio.get_running_loop()
        response = self._responses.adopt(
            lambda: Response(
                requested, loop, self.settings, queue, rid[:12], memory=self._memories.bind(agent)
            )
        )
        run = AgentRun(self, agent, prompt, state, self._responses, response, queue)
        producing: asyncio.Task[None] | None = None
        try:
            yield self._published(response.builder.agent_start(mode=requested.mode, request_id=rid))
            producing = asyncio.create_task(produce(run), name="voice-run")
            while (event := await queue.get()) is not None:
                response.delivered(event)
                yield self._published(event)
            producing.result()  # a bug in the producer surfaces here rather than vanishing
            log = response.log
            end = response.builder.agent_end(
                ttfa_ms=log.first_audio_ms, text_ms=run.text.last_ms, audio_ms=log.last_audio_ms
            )
            yield self._published(end)
        finally:
            await close_run(run, producing)  # also on caller disconnect: nothing outlives the generator

    def _published(self, event: Event) -> Event:
        self._hub.publish(event)
        return event

    # --- the event stream's async view and the lifecycle ----------------------------------------------

    def events(self, *, until_audio_end: bool = False) -> EventStream:
        """Subscribe to the handler's events on the calling loop (call from a coroutine).

        Args:
            until_audio_end: End after the next ``audio_end`` (one response) instead of at :meth:`close`.
        """
        return self._hub.subscribe(until_audio_end=until_audio_end)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every response's audio has been delivered and its session closed.

        Returns:
            False if ``timeout`` passed first.
        """
        return self._responses.wait(timeout)

    async def wait_async(self) -> None:
        """:meth:`wait` for coroutines, not blocking the calling loop (bound it with ``asyncio.timeout``)."""
        await self._responses.wait_async()

    def close(self, timeout: float = 5.0) -> None:
        """Stop speaking, end every worker thread and end :meth:`events` streams. Safe to call twice.

        A :meth:`stream` in progress is cancelled too (its generator ends once its consumer resumes).
        """
        self._responses.close(timeout)
        self._memories.settle(timeout)  # a rewritten answer is in its store once the handler is closed
        self._hub.end()
