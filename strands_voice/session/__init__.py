"""The TTS session: one Leg 1 session over any :class:`~strands_voice.transports.FrameTransport`.

The session holds the logic every transport shares: request ids, strict ordering, decoding frames with
:mod:`strands_voice_protocol.frames`, the connect timeout, the silence timeout (applied only while audio is
owed), a keepalive while nothing is owed, resume after a dropped connection, retry on ``busy``, and typed
events. Text chunks are sent the moment :meth:`TTSSession.synthesize` is called, without waiting for
earlier requests' audio: the endpoint pipelines them and answers strictly in order.

Resume (docs/reliability.md): the session remembers every request sent whose answer has not ended. When
the connection drops (or the endpoint closes it, refuses it with ``busy``/1013, or throttles), it
reconnects with bounded exponential backoff and jitter (:class:`~strands_voice.session.RetryPolicy`)
and re-sends every unfinished request, in order. A completed request is never sent again, so no byte of
its audio is ever repeated. A request cut mid-audio is sent again with Leg 1 ``skip_samples``: the
endpoint sends its audio from where delivery stopped, and the session joins it on
(``_seam.Seam``: a few ms of overlap dropped, any step faded out), so every sample is
delivered once and a player needs to do nothing; no event marks the seam. Against an endpoint that does
not know ``skip_samples`` (its ``synthesis_start`` does not echo it: the audio starts at sample 0) the
request is replayed WHOLE: the session first yields :class:`RequestRestarted` (the audio given for it so
far is void; a player drops or fades it), then the request's events again from :class:`RequestStarted`.
When the outage outlasts the policy's deadline, iteration raises the error that started it
(``connection_lost``, ``busy``, ...), once.

An ``error`` frame without ``request_id`` answers, in its place in the strict order of answers, a frame
the endpoint could not read (too large, not JSON): it settles at once the earliest request sent on this
connection whose answer has not begun (``RequestFailed`` with that request's id).

Example:
    ```python
    async with TTSSession(WebSocketTransport(url)) as session:
        await session.synthesize("Hello there.")
        await session.synthesize("How are you?")
        await session.finish()
        async for event in session:
            if isinstance(event, RequestRestarted):
                drop_partial(event.request_id)
            elif isinstance(event, AudioChunk):
                play(event.data)
    ```

The package is a sans-I/O core and a thin asyncio driver (the shape of python-websockets' ``protocol`` and
``asyncio.connection``):

- ``_core``: ``SessionCore``, every rule above as a state machine: events in (connected, frame received,
  connection lost, timer due, request submitted, cancel, finish, close), actions out (``_actions``: send,
  reconnect after a delay, deliver an event, fail, set the timer); ``_state``: its states and one table;
- ``_frames``: one frame from the endpoint read into events; ``_requests``: the owed requests;
  ``_seam``: where a resumed request's audio joins what was delivered; ``_retry``: the backoff;
- ``_driver``: :class:`TTSSession`, which performs the actions on a transport and an event loop;
- ``_events``: the events a consumer receives.
"""

from __future__ import annotations

from strands_voice.session._driver import DEFAULT_RETRY, SILENCE_TIMEOUT_S, TTSSession
from strands_voice.session._events import (
    AudioChunk,
    RequestCancelled,
    RequestCompleted,
    RequestFailed,
    RequestRestarted,
    RequestStarted,
    SessionEvent,
    WordsReceived,
)
from strands_voice.session._retry import NO_RETRY, Backoff, RetryPolicy, is_retryable

__all__ = [
    "DEFAULT_RETRY",
    "NO_RETRY",
    "SILENCE_TIMEOUT_S",
    "AudioChunk",
    "Backoff",
    "RequestCancelled",
    "RequestCompleted",
    "RequestFailed",
    "RequestRestarted",
    "RequestStarted",
    "RetryPolicy",
    "SessionEvent",
    "TTSSession",
    "WordsReceived",
    "is_retryable",
]
