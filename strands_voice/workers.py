"""The responses a voice handler has in progress, and the worker threads at the Strands callback boundary.

Strands calls a callback handler synchronously on the agent's loop (``agent("…")`` runs one of its own,
which ends with the call), while the answer's audio outlives it. So each response the Strands callback
starts runs on a worker thread with its own event loop: the only threads of the library's handler.
A ``stream()`` run needs none: its response runs on the caller's loop and is only registered here, so
that barge-in, :meth:`ActiveResponses.wait` and :meth:`ActiveResponses.close` see it too.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading

from strands_voice.response import Response

__all__ = ["ActiveResponses"]

logger = logging.getLogger(__name__)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class ActiveResponses:
    """A handler's responses in progress: the current one (still taking text) and those still speaking.

    Attributes:
        lock: Guards every field; held by the handler while it starts or ends the current response.
        current: The response the agent's text goes to now, if any.
        closed: The handler is closed: no response starts any more.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._idle = threading.Condition(self.lock)
        self.current: Response | None = None
        self._active: list[Response] = []
        self._threads: list[threading.Thread] = []
        self._async_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._numbers = itertools.count(1)
        self.closed = False

    def adopt(self, response: Response) -> None:
        """Make ``response`` (run by its caller) the current one. Hold :attr:`lock`."""
        self.current = response
        self._active.append(response)

    def start_on_thread(self, response: Response) -> None:
        """Make ``response`` the current one and run it on a new worker thread. Hold :attr:`lock`."""
        number = next(self._numbers)
        response.thread = threading.Thread(
            target=self._run, args=(response,), name=f"voice-response-{number}", daemon=True
        )
        self.adopt(response)
        self._threads.append(response.thread)
        response.thread.start()

    def _run(self, response: Response) -> None:
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
                self.finished(response)

    def take_current(self, response: Response | None = None) -> Response | None:
        """Detach the current response (only if it is ``response``, when given) and return it."""
        with self.lock:
            current = self.current
            if current is None or (response is not None and current is not response):
                return None
            self.current = None
        return current

    def finished(self, response: Response) -> None:
        """``response`` has ended: it is no longer active, and waiters wake once none is."""
        with self._idle:
            if response in self._active:
                self._active.remove(response)
            if self.current is response:
                self.current = None
            self._idle.notify_all()
            waiters = [] if self._active else self._async_waiters
            if waiters:
                self._async_waiters = []
        for loop, done in waiters:
            try:
                loop.call_soon_threadsafe(_resolve, done)
            except RuntimeError:
                pass  # that loop is closed

    def active(self) -> list[Response]:
        """The responses in progress now."""
        with self.lock:
            return list(self._active)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no response is in progress and every worker thread has ended.

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
        """:meth:`wait` for coroutines, not blocking the calling loop."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        with self.lock:
            if not self._active:
                return
            self._async_waiters.append((loop, done))
        try:
            await done
        finally:
            with self.lock:
                if (loop, done) in self._async_waiters:
                    self._async_waiters.remove((loop, done))
        self.wait()  # every worker has finished: this only joins ended threads

    def close(self, timeout: float) -> None:
        """Start no more responses, cancel those in progress and join their worker threads."""
        with self.lock:
            self.closed = True
            self.current = None
            active = list(self._active)
        for response in active:
            response.cancel()
        for response in active:
            if response.thread is not None and response.thread is not threading.current_thread():
                response.thread.join(timeout)
        with self.lock:
            threads, self._threads = self._threads, []
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(timeout)
