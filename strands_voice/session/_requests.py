"""The requests a session owes answers for: their order, the ids they went out under, what was delivered.

Sans-I/O bookkeeping for :class:`~strands_voice.session._core.SessionCore`: no asyncio, no transport.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

from strands_voice_protocol.frames import Synthesize
from strands_voice_protocol.wire import SAMPLE_RATE

from strands_voice.session._seam import Seam

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class OwedRequest:
    """One request the session owes an answer for."""

    request_id: str
    text: str
    voice: str | None
    speed: float | None
    normalize: bool | None = None
    timestamps: bool | None = None
    lang: str | None = None
    lexicon: Mapping[str, str] | None = None
    wire_id: str | None = None  # the id it was last sent under (None: never sent)
    generation: int = -1  # the connection it was last sent on
    attempts: int = 0
    cancelled: bool = False
    started: bool = False  # RequestStarted was given (and not voided by a RequestRestarted)
    answered: bool = False  # the endpoint began answering it on the current connection
    delivered: int = 0  # audio bytes given since RequestStarted
    tail: bytes = b""  # the last few ms given (a resume's overlap is compared with it)
    seam: Seam | None = None  # set while a cut request resumes with skip_samples
    resumed: bool = False  # audio continued past a seam (RequestCompleted then counts every byte given)
    sample_rate: int = SAMPLE_RATE
    words_until: int = 0  # the end (a char offset) of the words given so far


class RequestBook:
    """The owed requests in the order sent (the order the endpoint answers them), and the connection
    generation they were last sent on."""

    def __init__(self) -> None:
        self.owed: OrderedDict[str, OwedRequest] = OrderedDict()
        self.by_wire: dict[str, OwedRequest] = {}
        self.current: OwedRequest | None = None  # the request whose audio is arriving now
        self.generation = 0

    def live(self) -> list[str]:
        """Ids of owed requests not cancelled, in order."""
        return [rid for rid, request in self.owed.items() if not request.cancelled]

    def add(self, request: OwedRequest) -> None:
        """Owe an answer for ``request`` (not sent yet)."""
        self.owed[request.request_id] = request

    def forget(self, request: OwedRequest) -> None:
        """Nothing more is owed for ``request``."""
        self.owed.pop(request.request_id, None)
        if request.wire_id is not None:
            self.by_wire.pop(request.wire_id, None)
        if self.current is request:
            self.current = None

    def end(self, wire_id: str) -> OwedRequest | None:
        """Forget the owed request sent as ``wire_id``; None if no owed request was."""
        request = self.by_wire.get(wire_id)
        if request is not None:
            self.forget(request)
        return request

    def clear(self) -> None:
        """Nothing is owed any more."""
        self.owed.clear()
        self.by_wire.clear()
        self.current = None

    def unsent(self) -> list[OwedRequest]:
        """Owed requests, not cancelled, not yet sent on the current connection, in order."""
        return [r for r in self.owed.values() if r.generation != self.generation and not r.cancelled]

    def send(self, request: OwedRequest) -> Synthesize:
        """The ``synthesize`` that sends (or re-sends, under a fresh wire id) ``request`` now."""
        if request.wire_id is not None:
            self.by_wire.pop(request.wire_id, None)
        wire_id = request.request_id if request.attempts == 0 else f"{request.request_id}~{request.attempts}"
        request.attempts += 1
        request.wire_id = wire_id
        request.generation = self.generation
        request.answered = False
        self.by_wire[wire_id] = request
        return Synthesize(
            text=request.text,
            voice=request.voice,
            speed=request.speed,
            request_id=wire_id,
            normalize=request.normalize,
            timestamps=request.timestamps,
            skip_samples=None if request.seam is None else request.seam.skip_samples,
            lang=request.lang,
            lexicon=request.lexicon,
        )

    def cut(self) -> list[str]:
        """The connection is lost: every owed request is to be sent again; one whose audio began resumes at
        the sample where delivery stopped (a :class:`Seam`). Returns the cancelled requests this ends."""
        self.current = None
        for request in self.owed.values():
            if request.wire_id is not None:
                self.by_wire.pop(request.wire_id, None)
            request.generation = -1
            if request.started and not request.cancelled:
                request.seam = Seam(request.delivered, request.tail)
                logger.debug(
                    "request_id=<%s>, delivered_bytes=<%d>, skip_samples=<%d> | resuming at a sample",
                    request.request_id,
                    request.delivered,
                    request.seam.skip_samples,
                )
        return self.end_cancelled_unsent()

    def end_cancelled_unsent(self) -> list[str]:
        """Cancelled requests not on the current connection end here (nothing will answer them)."""
        ended = [r for r in self.owed.values() if r.cancelled and r.generation != self.generation]
        for request in ended:
            self.forget(request)
        return [request.request_id for request in ended]

    def first_unanswered(self) -> OwedRequest | None:
        """The earliest request sent on this connection whose answer has not begun."""
        return next(
            (r for r in self.owed.values() if r.generation == self.generation and not r.answered), None
        )
