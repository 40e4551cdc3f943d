"""Conversation store writes off the server's event loop: one writer thread per conversation, in order.

Strands' session managers write from the agent's hooks, on the loop that runs the agent, which in this app
is the server's: a file, S3 or AgentCore Memory call there would stall every session's answer, not only
its own. :class:`OffLoopSessionManager` wraps the store's session manager:

- each hook the wrapped manager registers (a message added, an invocation ended) becomes an async hook
  that runs it on the conversation's writer thread and waits for it: the agent waits for its own write,
  as before, and the loop goes on serving the other sessions meanwhile;
- a direct call (the agent's redaction, the voice library rewriting an interrupted answer to the heard
  text) is queued on the same thread and returns at once, after the writes queued before it;
- a write that fails is logged with the code :data:`STORE_WRITE_FAILED` and the answer goes on: the
  conversation stays whole in the app's memory, and the next turn works;
- :meth:`OffLoopSessionManager.flushed` is done once every write queued so far has run (the app waits for
  it at the end of a turn, so a finished answer's stream ends with the turn stored).

Restoring a conversation (``AgentInitializedEvent``) stays synchronous, as Strands requires: the app builds
agents on a worker thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Final

from strands.hooks import AgentInitializedEvent, HookRegistry
from strands.session.session_manager import SessionManager
from strands.types.content import Message

__all__ = ["STORE_WRITE_FAILED", "STORE_WRITE_PENDING", "OffLoopSessionManager"]

logger = logging.getLogger(__name__)

#: The code logged when the conversation store refuses or fails a write (the answer is still spoken).
STORE_WRITE_FAILED: Final = "store_write_failed"
#: The code logged when a turn ends before its writes do (they go on, in order).
STORE_WRITE_PENDING: Final = "store_write_pending"

_Job = Callable[[], object]


class _SerialWriter:
    """Runs jobs one at a time, in the order given, on a thread that exists only while there is work."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._jobs: deque[tuple[_Job, concurrent.futures.Future[None]]] = deque()
        self._running = False

    @property
    def busy(self) -> bool:
        """Whether a job is queued or running."""
        with self._lock:
            return self._running

    def submit(self, job: _Job) -> concurrent.futures.Future[None]:
        """Queue ``job``; the future holds its outcome."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        with self._lock:
            self._jobs.append((job, future))
            if not self._running:
                self._running = True
                threading.Thread(target=self._drain, name=self._name).start()
        return future

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._jobs:
                    self._running = False
                    return
                job, future = self._jobs.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            failure: BaseException | None = None
            try:
                job()
            except BaseException as error:  # handed to whoever waits on the future
                failure = error
            with self._lock:
                last = not self._jobs
                if last:
                    self._running = False  # not busy any more once the last waiter hears of it
            if failure is None:
                future.set_result(None)
            else:
                future.set_exception(failure)
            if last:
                return


class _OffLoopRegistry(HookRegistry):
    """The registry the wrapped manager registers on: its hooks run on the writer thread."""

    def __init__(self, registry: HookRegistry, manager: OffLoopSessionManager) -> None:
        super().__init__()
        self._registry = registry
        self._manager = manager

    def add_callback(self, event_type: Any, callback: Any, **kwargs: Any) -> None:
        """Register ``callback`` on the agent's registry, as an async hook running it off the loop."""
        if event_type is AgentInitializedEvent or inspect.iscoroutinefunction(callback):
            self._registry.add_callback(event_type, callback, **kwargs)
            return
        manager = self._manager

        async def off_loop(event: Any) -> None:
            await manager.written(lambda: callback(event))

        self._registry.add_callback(event_type, off_loop, **kwargs)


class OffLoopSessionManager(SessionManager):
    """``inner``'s writes on a writer thread of their own (see the module docstring).

    Args:
        inner: The store's session manager for this conversation.
    """

    def __init__(self, inner: SessionManager) -> None:
        self.inner = inner
        self.session_id = inner.session_id
        self.failed_writes = 0
        self._writer = _SerialWriter(f"conversation-store-{self.session_id[:24]}")

    @property
    def busy(self) -> bool:
        """Whether a write is queued or running."""
        return self._writer.busy

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Register ``inner``'s hooks, each made to run on the writer thread."""
        self.inner.register_hooks(_OffLoopRegistry(registry, self), **kwargs)

    async def written(self, job: _Job) -> None:
        """Run ``job`` (a store write) on the writer thread and wait for it; a failure is logged only.

        The write is shielded: a cancelled answer does not drop a write the store is still owed.
        """
        future = self._queue(job)
        await asyncio.shield(asyncio.wrap_future(future))

    async def flushed(self) -> None:
        """Wait until every write queued so far has run."""
        await asyncio.shield(asyncio.wrap_future(self._writer.submit(lambda: None)))

    def _queue(self, job: _Job) -> concurrent.futures.Future[None]:
        def logged() -> None:
            try:
                job()
            except Exception as error:
                self.failed_writes += 1
                logger.error(
                    "session_id=<%s>, code=<%s>, error=<%s> | store write failed; the answer goes on",
                    self.session_id,
                    STORE_WRITE_FAILED,
                    error,
                )

        return self._writer.submit(logged)

    def redact_latest_message(self, redact_message: Message, agent: Any, **kwargs: Any) -> None:
        """Queue ``inner``'s redaction of the latest message (returns at once)."""
        self._queue(lambda: self.inner.redact_latest_message(redact_message, agent, **kwargs))

    def append_message(self, message: Message, agent: Any, **kwargs: Any) -> None:
        """Queue ``inner``'s append of ``message`` (returns at once)."""
        self._queue(lambda: self.inner.append_message(message, agent, **kwargs))

    def sync_agent(self, agent: Any, **kwargs: Any) -> None:
        """Queue ``inner``'s sync of the agent (returns at once)."""
        self._queue(lambda: self.inner.sync_agent(agent, **kwargs))

    def initialize(self, agent: Any, **kwargs: Any) -> None:
        """``inner``'s restore of the agent, here and now (Strands calls it synchronously)."""
        self.inner.initialize(agent, **kwargs)
