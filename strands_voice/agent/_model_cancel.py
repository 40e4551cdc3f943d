"""A cancelled agent stops its model's stream at once, whatever the model.

Strands ends a cancelled invocation (``agent.cancel()``, which a barge-in calls) at its checkpoint
between two chunks of the model's stream, and hands the model the cancel signal so that a provider can
abort in flight; its Bedrock model does, others (OpenAI-compatible servers, LiteLLM, Ollama, a custom
model) do not. With those, a model that sends nothing for a while (its time to first token, a tool
call's arguments, which ``OpenAIModel`` gathers without passing on, a server under load) keeps the
answer going until its next chunk, however long that takes. And once the checkpoint has ended the
invocation the model's stream is left unclosed: its HTTP response stays open (the server goes on
writing) until garbage collection finalizes the abandoned generators, at a time of its choosing and in
an order that makes httpcore log ``aclose(): asynchronous generator is already running``.

:func:`cancel_model_streams` gives an agent an ``InvokeModelStage.Input`` middleware (Strands' public way
to replace the model of one call) that wraps each call's model in :class:`CancellingModel`. Its stream is
read by a task of its own, and the cancel signal is watched beside it: once it is set, that task is
cancelled, so the model's own ``async with`` blocks close its client and its response right away, and
the stream ends without its ``messageStop``, which Strands reports as the ``cancelled`` stop reason with
the message given to ``agent.cancel``. A model that already stops on the signal just ends first.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import AsyncGenerator, AsyncIterable
from typing import TYPE_CHECKING, Any, Final, cast

from strands.middleware import InvokeModelContext, InvokeModelStage
from strands_voice_protocol.aio.tasks import cancel_and_wait

if TYPE_CHECKING:
    from strands import Agent
    from strands.models import Model
    from strands.types.streaming import StreamEvent

__all__ = ["CancellingModel", "cancel_model_streams"]

logger = logging.getLogger(__name__)

#: Seconds between two looks at the cancel signal (a ``threading.Event``: it has no async wakeup; Strands
#: polls it at the same pace).
CANCEL_POLL_S: Final = 0.05

#: Seconds the model's stream gets to close once cancelled (its client's ``aclose``).
CLOSE_TIMEOUT_S: Final = 5.0

_agents_lock = threading.Lock()
_agents: weakref.WeakSet[Any] = weakref.WeakSet()


def cancel_model_streams(agent: Agent) -> None:
    """Make ``agent``'s model streams end as soon as it is cancelled (once per agent; thread-safe)."""
    with _agents_lock:
        if agent in _agents:
            return
        _agents.add(agent)
    agent.add_middleware(InvokeModelStage.Input, _cancelling)


def _cancelling(context: InvokeModelContext) -> InvokeModelContext:
    if isinstance(context.model, CancellingModel):
        return context
    # Not a Model subclass (see CancellingModel): the cast only tells the type checker what it stands for.
    return context.replace(model=cast("Model", CancellingModel(context.model)))


class CancellingModel:
    """``model``, whose streams end as soon as the cancel signal Strands passes them is set.

    Everything but :meth:`stream` is ``model``'s own: the wrapper is deliberately no ``Model`` subclass,
    whose class attributes (``_supports_structured_output``, ``stateful``, ...) would hide the wrapped
    model's.

    Args:
        model: The model of one call.
    """

    def __init__(self, model: Model) -> None:
        self.wrapped = model

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    def stream(
        self,
        messages: Any,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        """The wrapped model's stream, ended (and closed) once ``kwargs["cancel_signal"]`` is set."""
        chunks = self.wrapped.stream(messages, tool_specs, system_prompt, **kwargs)
        signal = kwargs.get("cancel_signal")
        if not isinstance(signal, threading.Event):
            return chunks
        return until_cancelled(chunks, signal)


async def until_cancelled(
    chunks: AsyncIterable[StreamEvent], signal: threading.Event
) -> AsyncGenerator[StreamEvent, None]:
    """``chunks`` until ``signal`` is set; then the stream is cancelled and closed, and this one ends."""
    handoff: asyncio.Queue[StreamEvent] = asyncio.Queue()
    wanted = asyncio.Semaphore(0)  # one chunk is asked of the model per chunk Strands asks for
    reading = asyncio.create_task(_read(chunks, handoff, wanted), name="voice-model-stream")
    watching = asyncio.create_task(_stop_when_set(signal, reading), name="voice-model-cancel")
    try:
        # Strands' checkpoint would drop a chunk that comes after the cancel: none is handed on.
        while not signal.is_set():
            wanted.release()
            chunk = await _next_chunk(handoff, reading)
            if chunk is None or signal.is_set():
                break
            yield chunk
    finally:
        await cancel_and_wait([reading, watching], CLOSE_TIMEOUT_S)
    error = reading.exception() if reading.done() and not reading.cancelled() else None
    if error is not None:
        if signal.is_set():
            logger.debug("error=<%s> | the cancelled model stream failed while closing", error)
        else:
            raise error  # the model's own error, raised to Strands as it would have been without this


async def _read(
    chunks: AsyncIterable[StreamEvent], handoff: asyncio.Queue[StreamEvent], wanted: asyncio.Semaphore
) -> None:
    """Ask the model for a chunk each time one is ``wanted`` and hand it over; close the stream at the end.

    Cancelled while the model waits for its server, the model's own ``async with`` blocks unwind; while it
    waits at a ``yield``, its ``aclose`` does the same.
    """
    iterator = aiter(chunks)
    try:
        while True:
            await wanted.acquire()
            try:
                chunk = await anext(iterator)
            except StopAsyncIteration:
                return
            handoff.put_nowait(chunk)
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()


async def _stop_when_set(signal: threading.Event, reading: asyncio.Task[None]) -> None:
    """Cancel ``reading`` once ``signal`` is set, even while nobody asks for the next chunk."""
    while not signal.is_set():  # noqa: ASYNC110 (a thread's event: it has no async wakeup)
        await asyncio.sleep(CANCEL_POLL_S)
    reading.cancel()


async def _next_chunk(handoff: asyncio.Queue[StreamEvent], reading: asyncio.Task[None]) -> StreamEvent | None:
    """The chunk asked for, or None once the stream has ended (read to its end, failed, or cancelled)."""
    if handoff.empty() and not reading.done():
        getting = asyncio.ensure_future(handoff.get())
        try:
            await asyncio.wait({getting, reading}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not getting.done():
                getting.cancel()  # a cancelled get takes nothing from the queue
        if getting.done() and not getting.cancelled():
            return getting.result()
    return None if handoff.empty() else handoff.get_nowait()
