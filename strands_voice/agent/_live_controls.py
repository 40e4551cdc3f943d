"""What a caller's player or a turn-taking loop does to the responses in progress (any thread or loop):
barge in (:meth:`LiveControls.interrupt`), drop an answer nothing of which was heard, pause and resume it,
confirm what a phone played, and read how much was heard. :class:`~strands_voice.agent.VoiceCallbackHandler`
has them; they act on every response in progress.
"""

from __future__ import annotations

from strands_voice.agent._answer_memory import AnswerMemories, AnswerMemory
from strands_voice.agent._workers import ActiveResponses

__all__ = ["LiveControls"]


class LiveControls:
    """The live controls of the responses in ``_responses`` (the handler's, set by its ``__init__``)."""

    _responses: ActiveResponses

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
        active = self._responses.active()
        for response in active:
            response.interrupt()
        return bool(active)

    def drop(self) -> bool:
        """Stop every response in progress of which the caller has heard nothing, and forget it (any
        thread or loop; idempotent): as :meth:`interrupt`, except that the agent writing it keeps no trace
        of it (no answer, not even an ellipsis, and no question: the caller's next turn asks it again).
        For a speculative answer, or one the caller talked over before it was heard.

        Returns:
            Whether a response was in progress.
        """
        active = self._responses.active()
        for response in active:
            if isinstance(response.memory, AnswerMemory):
                AnswerMemories.drop(response.memory)
            response.interrupt()
        return bool(active)

    def pause(self) -> bool:
        """Hold the speech where it is (any thread or loop; idempotent): no more audio is delivered and
        the heard count stops until :meth:`resume`, or :meth:`interrupt` ends the response. For a caller
        who may be barging in: a backchannel resumes, real words interrupt.

        Returns:
            Whether a response was in progress.
        """
        active = self._responses.active()
        for response in active:
            response.pause()
        return bool(active)

    def resume(self) -> bool:
        """Go on from where :meth:`pause` held the speech: nothing repeated, nothing lost.

        Returns:
            Whether a response was in progress.
        """
        active = self._responses.active()
        for response in active:
            response.resume()
        return bool(active)

    def confirm_played(self, sentence: int) -> bool:
        """The caller's player has played ``sentence`` of the response in progress to its end (a phone's
        mark): what was heard follows its word (any thread or loop). Returns whether one was in progress."""
        active = self._responses.active()
        for response in active:
            response.confirm(sentence)
        return bool(active)

    @property
    def heard_ms(self) -> float | None:
        """How much of the response in progress the caller has played, in ms (None: none in progress)."""
        active = self._responses.active()
        return active[0].heard_ms if active else None

    def unplayed_ms(self) -> float | None:
        """How much delivered audio of the response in progress the caller has not played yet, in ms
        (None: none in progress). A consumer that sends audio on at once can pace itself with it, so that
        a pause or a barge-in finds little audio already on its way."""
        active = self._responses.active()
        return active[0].unplayed_ms if active else None

    @property
    def speaking(self) -> bool:
        """True while any response still has text or audio in flight."""
        return bool(self._responses.active())
