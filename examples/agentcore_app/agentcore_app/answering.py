"""One answer of the app, the same for ``POST /invocations`` and a spoken call on ``/ws``.

:class:`Answering` holds what every answer shares (the conversations, the TTS settings, the metrics) and
gives each turn a fresh :class:`~strands_voice.VoiceCallbackHandler` (the whole voice pipeline)
and its Leg 3 events: the session's agent (a fresh one without a session id) answers through
``handler.stream()``, after the session's previous answer has stopped (a new turn barges in on it).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator
from dataclasses import dataclass

from strands_voice_protocol.events import Event, EventBuilder

from agentcore_app.conversation import Conversations, SessionBusyError
from strands_voice.agent import VoiceCallbackHandler
from strands_voice.speech import TransportFactory

from .metrics import AnswerMetrics, measured
from .payload import VoiceRequest

__all__ = ["Answering"]

logger = logging.getLogger(__name__)


@dataclass
class Answering:
    """What every answer of the app shares, and the one way an answer is made.

    Attributes:
        conversations: The app's conversations (one agent per session id, one answer at a time).
        tts_url: The TTS endpoint.
        silence_timeout: Seconds the endpoint may stay silent while audio is owed.
        transport_factory: Creates the TTS transports instead of ``tts_url`` (tests).
        metrics: Where each answer's figures go (None: nowhere).
    """

    conversations: Conversations
    tts_url: str
    silence_timeout: float
    transport_factory: TransportFactory | None = None
    metrics: AnswerMetrics | None = None

    def new_handler(self) -> VoiceCallbackHandler:
        """A fresh voice handler for one answer."""
        return VoiceCallbackHandler(
            self.tts_url, silence_timeout=self.silence_timeout, transport_factory=self.transport_factory
        )

    def answer(
        self,
        request: VoiceRequest,
        request_id: str | None,
        session_id: str | None,
        voice: VoiceCallbackHandler,
    ) -> AsyncGenerator[Event, None]:
        """The answer's Leg 3 events, measured when the app has metrics; closing it stops the answer."""

        async def events() -> AsyncGenerator[Event, None]:
            # Only for an error raised past the handler's stream; its t_ms is close enough.
            clock = EventBuilder()
            try:
                # The session's previous answer, if still speaking, is interrupted and has ended by now.
                async with self.conversations.agent_for_answer(session_id, voice, request_id) as agent:
                    # text_delta from the agent's token stream and the handler's speech events, one queue.
                    spoken = voice.stream(
                        agent, request.prompt, options=request.options, request_id=request_id
                    )
                    # Closing this generator (the caller left) closes the stream, its tasks and TTS session.
                    async with contextlib.aclosing(spoken):
                        async for event in spoken:
                            yield event
            except SessionBusyError:
                message = "this session's previous answer is still stopping; try again"
                yield clock.error(code="busy", message=message)
            except Exception:
                logger.exception("request_id=<%s> | voice answer failed", request_id)
                yield clock.error(code="internal", message="the agent could not finish its answer; try again")
            finally:
                voice.close()

        return events() if self.metrics is None else measured(events(), self.metrics)
