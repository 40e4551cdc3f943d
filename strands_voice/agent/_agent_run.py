"""One agent run under ``VoiceCallbackHandler.stream`` (:mod:`strands_voice.agent._handler`).

The run drives the agent's ``stream_async`` on the caller's loop: its callback feeds the run's
:class:`~strands_voice.speech.Response` (speech), and its text deltas become ``text_delta`` events in
the same bounded :class:`~strands_voice.speech.EventQueue` as the speech events, so one consumer
reads the whole Leg 3 stream in arrival order and a slow one slows the agent too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from strands_voice_protocol.aio.tasks import cancel_and_wait

from strands_voice.agent._callback_chain import joined
from strands_voice.agent._workers import ActiveResponses
from strands_voice.speech import CANCEL_TIMEOUT, EventQueue, Response

if TYPE_CHECKING:
    from strands import Agent


logger = logging.getLogger(__name__)


class TextLog:
    """The ``text_delta`` events of one run: how many, and when the last one was made."""

    def __init__(self) -> None:
        self.count = 0
        self.last_ms: float | None = None


@contextlib.contextmanager
def attached(voice: Callable[..., None], agent: Agent) -> Iterator[None]:
    """``voice`` in ``agent``'s callback chain for the duration (composed with the agent's own)."""
    own = agent.callback_handler
    chain = joined(own, voice)
    if chain is own:
        yield
        return
    agent.callback_handler = chain
    try:
        yield
    finally:
        agent.callback_handler = own


@contextlib.contextmanager
def _finishing(response: Response) -> Iterator[None]:
    """Tell the answer's memory that the agent's run ended, however it ended."""
    try:
        yield
    finally:
        if response.memory is not None:
            response.memory.finished()


@dataclass
class AgentRun:
    """One agent run under ``stream()``: who drives it, and where its events go.

    Attributes:
        voice: The voice handler, the agent's callback (it feeds ``response``).
        agent: The Strands agent.
        prompt: The user's prompt.
        state: The run's ``invocation_state``.
        responses: The handler's responses in progress (the run's is detached from them when it ends).
        response: The run's speech.
        queue: The one bounded queue its consumer reads.
        text: Its ``text_delta`` events so far.
    """

    voice: Callable[..., None]
    agent: Agent
    prompt: Any
    state: dict[str, Any]
    responses: ActiveResponses
    response: Response
    queue: EventQueue
    text: TextLog = field(default_factory=TextLog)


async def produce(run: AgentRun) -> None:
    """Drive the agent (its callback feeds the run's response) and queue its ``text_delta`` events.

    Ends the queue with its end marker (``None``), whatever happens.
    """
    response, queue, text = run.response, run.queue, run.text
    speaking = asyncio.create_task(response.run(), name="voice-response")
    try:
        try:
            with attached(run.voice, run.agent), _finishing(response):
                async for event in run.agent.stream_async(run.prompt, invocation_state=run.state):
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
        run.responses.take_current(response)
        response.end()
        await speaking
    finally:
        await cancel_and_wait([speaking], CANCEL_TIMEOUT)
        queue.put_nowait(None)  # the consumer's end marker, whatever happened


async def let_agent_stop(response: Response, producing: asyncio.Task[None], queue: EventQueue) -> None:
    """The caller left mid-answer: barge in, and give the cancelled agent a moment to end its turn.

    The agent then keeps what was heard as its answer instead of losing the turn to a cancelled task
    (which would leave the user's message unanswered in its history). Nobody reads the queue any more:
    it is emptied so the producer never waits for room.
    """
    response.interrupt()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CANCEL_TIMEOUT
    while not producing.done() and loop.time() < deadline:
        queue.purge(lambda _event: True)
        await asyncio.wait({producing}, timeout=0.05)


async def close_run(run: AgentRun, producing: asyncio.Task[None] | None) -> None:
    """End the run however it ended (its consumer may have left: ``aclose``, cancellation).

    A producer still running is barged in on and given a moment (:func:`let_agent_stop`), then cancelled;
    the response is detached from the handler's responses. Nothing outlives the run.
    """
    if producing is not None:
        if not producing.done():
            await let_agent_stop(run.response, producing, run.queue)
        await cancel_and_wait([producing], CANCEL_TIMEOUT)
        if producing.done() and not producing.cancelled():
            producing.exception()  # retrieved (re-raised by the stream when the run ended normally)
    unended = run.responses.take_current(run.response)
    if unended is not None:
        unended.end()
    run.responses.finished(run.response)
