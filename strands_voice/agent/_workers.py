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
from collections.abc import Callable

from strands_voice.speech import Response

logger = logging.getLogger(__name__)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class ActiveResponses:
    """A handler's responses in progress: the current one (still taking text) and those still speaking.

    It owns its lock: every method takes it; none is held by a caller. Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._current: Response | None = None
        self._active: list[Response] = []
        self._threads: dict[Response, threading.Thread] = {}
        self._async_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._numbers = itertools.count(1)
        self._closed = False

    @property
    def current(self) -> Response | None:
        """The response the agent's text goes to now, if any."""
        with self._lock:
            return self._current

    def current_or_start(self, make: Callable[[], Response]) -> Response | None:
        """The current response, or a new one ``make`` builds, started on a new worker thread.

        None once the handler is closed. A response may end while its caller still holds it (it was
        interrupted, or its speech failed): text fed to it then is dropped, as it would be a moment later.
        """
        with self._lock:
            if self._closed:
                return None
            if self._current is None:
                self._start_on_thread(make())
            return self._current

    def adopt(self, make: Callable[[], Response]) -> Response:
        """Make the response ``make`` builds (run by its caller, on its loop) the current one.

        Raises:
            RuntimeError: The handler is closed, or already speaking a response.
        """
        with self._lock:
            if self._closed:
                raise RuntimeError("the voice handler is closed")
            if self._current is not None:
                raise RuntimeError("the voice handler is already speaking a response")
            response = make()
            self._current = response
            self._active.append(response)
        return response

    def _start_on_thread(self, response: Response) -> None:
        """Make ``response`` the current one and run it on a new worker thread. Hold the lock."""
        number = next(self._numbers)
        thread = threading.Thread(
            target=self._run, args=(response,), name=f"voice-response-{number}", daemon=True
        )
        self._current = response
        self._active.append(response)
        self._threads[response] = thread
        thread.start()

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
        with self._lock:
            current = self._current
            if current is None or (response is not None and current is not response):
                return None
            self._current = None
        return current

    def finished(self, response: Response) -> None:
        """``response`` has ended: it is no longer active, and waiters wake once none is."""
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

    def active(self) -> list[Response]:
        """The responses in progress now."""
        with self._lock:
            return list(self._active)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no response is in progress and every worker thread has ended.

        Returns:
            False if ``timeout`` passed first.
        """
        with self._idle:
            if not self._idle.wait_for(lambda: not self._active, timeout):
                return False
            threads = list(self._threads.values())
            self._threads.clear()
        for thread in threads:
            thread.join()  # already past its last step: returns at once
        return True

    async def wait_async(self) -> None:
        """:meth:`wait` for coroutines, not blocking the calling loop."""
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

    def close(self, timeout: float) -> None:
        """Start no more responses, cancel those in progress and join their worker threads."""
        with self._lock:
            self._closed = True
            self._current = None
            active = list(self._active)
            threads = list(self._threads.values())
            self._threads.clear()
        for response in active:
            response.cancel()
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(timeout)
