"""``VoiceCascade``: any Strands text model as a ``strands.bidi`` model, hearing and speaking.

The cascade is a ``BidiModel`` (and ``AudioCapable``: PCM16 mono in at 16 kHz, PCM16 mono out at 24 kHz)
made of three parts: a :class:`~strands_voice.listen.Listener` (Silero VAD, end of turn, a recognizer:
offline faster-whisper by default), a Strands ``Model``, and the Kokoro endpoint spoken to through the
library's one voice pipeline (:class:`~strands_voice.speech.Response`, see
:mod:`strands_voice.cascade._answer`, its model loop and its audio delivery).
``BidiAgent(model=VoiceCascade(...), tools=[...])`` then runs with its own
``run(inputs=[...], outputs=[...])`` / ``send()`` / ``receive()``.

- The caller's audio (``AudioDelta``) feeds the listener; who speaks when is the one turn-taking core's
  (:mod:`strands_voice.turns`, through :mod:`strands_voice.cascade._turns`). A turn, once it ends (a
  pause mid-sentence is not an end), becomes a user transcript (``role="user"``, in ``BidiAgent``'s
  history) and starts an answer; typed text (``BidiMessage``) starts one too.
- At a pause whose words look finished the answer starts at once, held: nothing of it is emitted or kept
  in either history until the turn ends with those words (a caller who goes on drops it in silence, its
  model request cancelled; ``TurnSettings(speculate=False)`` turns this off).
- The caller's first sound over an answer pauses it; real words then barge in: ``BidiBargeInEvent``, the
  answer's TTS cancelled (Leg 1 ``cancel``), its model stream cancelled, and what the caller heard kept
  as the answer in both histories; a backchannel or a noise lets it go on from where it paused.
- Tool results ``BidiAgent`` sends back go to the answer that asked for them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from collections.abc import AsyncIterable
from typing import Any, Final

from strands.bidi.models.configs import AudioConfig
from strands.bidi.models.model import BidiModel
from strands.bidi.types.content import BidiContentDelta, BidiMessage
from strands.bidi.types.events import BidiConnectionStartEvent, BidiOutputEvent
from strands.bidi.types.media import AudioDelta
from strands.models.model import Model
from strands.types.content import Messages, TextBlock
from strands.types.tools import ToolResult, ToolResultBlock, ToolSpec
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.wire import SAMPLE_RATE

from strands_voice.cascade._answer import SpokenAnswer
from strands_voice.cascade._answer_parts import AnswerParts, Marks
from strands_voice.cascade._conversation import model_messages
from strands_voice.cascade._turns import CascadeTurns
from strands_voice.listen import (
    DEFAULT,
    DefaultTurnModel,
    ListenSettings,
    Recognizer,
    TurnModel,
    Vad,
    WhisperRecognizer,
    hearing_language_of,
)
from strands_voice.speech import EventQueue, Response, ResponseSettings, TransportFactory, VoiceOptions
from strands_voice.transports import CONNECT_TIMEOUT_S, transport_from_url
from strands_voice.turns import TurnSettings

__all__ = ["VoiceCascade"]

logger = logging.getLogger(__name__)

LISTEN_RATE: Final = 16000
_CLOSE_GRACE_S: Final = 5.0


def _transport_factory(
    tts_url: str | None, factory: TransportFactory | None, timeout: float
) -> TransportFactory:
    if factory is not None:
        return factory
    if tts_url is None:
        raise ConfigurationError("give tts_url or transport_factory")
    url = tts_url

    def make() -> Any:
        return transport_from_url(url, connect_timeout=timeout)

    return make


class VoiceCascade(BidiModel):
    """A Strands text model that hears (VAD + speech recognition) and speaks (Kokoro), for ``BidiAgent``.

    Args:
        model: Any Strands ``Model`` (Bedrock, OpenAI-compatible, a stand-in, ...).
        tts_url: The Kokoro endpoint: ``ws://``/``wss://`` or ``sagemaker://`` (or give
            ``transport_factory``).
        options: Voice, speed, language of the answers (always pcm16, ``bidi`` mode, with word timings).
        connect_timeout: Seconds opening a TTS session may take.
        transport_factory: Creates each answer's TTS transport (instead of ``tts_url``).
        max_queued_events: Speech events held before the TTS session's reading waits (backpressure).
        recognizer: The speech recognizer (default: offline faster-whisper in the caller's language, the
            ``listen`` extra).
        settings: VAD thresholds, the end of a turn, the caller's language (default: the answers' language,
            ``options.lang`` else the voice's letter, as the endpoint reads it).
        vad: The VAD (default: Silero).
        turn_model: The turn-end model (default: Smart Turn where installed; None: the silence timer).
        turn_settings: How the caller's speech over an answer is decided (barge-in or go on).
        lead_s: How far the answer's audio may run ahead of what the caller has played (a pause stops
            the sound within it).
    """

    def __init__(
        self,
        model: Model,
        tts_url: str | None = None,
        *,
        options: VoiceOptions | None = None,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        transport_factory: TransportFactory | None = None,
        max_queued_events: int = 256,
        recognizer: Recognizer | None = None,
        settings: ListenSettings | None = None,
        vad: Vad | None = None,
        turn_model: TurnModel | DefaultTurnModel | None = DEFAULT,
        turn_settings: TurnSettings | None = None,
        lead_s: float = 0.1,
    ) -> None:
        factory = _transport_factory(tts_url, transport_factory, connect_timeout)
        self.model = model
        # Word timings: a barge-in mid-sentence keeps the words of it that were heard.
        voice = options or VoiceOptions()
        self.options = dataclasses.replace(voice, format="pcm16", mode="bidi", timestamps=True)
        self.response_settings = ResponseSettings(factory, connect_timeout=connect_timeout)
        # The caller is heard in the answers' language unless the settings say another.
        hears = hearing_language_of(voice.lang, voice.voice)
        self.listen_settings = settings or ListenSettings(language=hears)
        if recognizer is None:
            recognizer = WhisperRecognizer(language=self.listen_settings.language)
        self.recognizer = recognizer
        self._vad = vad
        self._turn_model = turn_model
        self._turn_settings = turn_settings
        self._lead_s = lead_s
        self._max_queued_events = max_queued_events
        inner = model.get_config().get("model_id") if isinstance(model.get_config(), dict) else None
        self.config: dict[str, Any] = {"model_id": f"voice-cascade/{inner or type(model).__name__}"}
        #: Milestones of the latest answer (``time.perf_counter()``), for the bench.
        self.marks: Marks = {}
        self._out: asyncio.Queue[BidiOutputEvent | None] = asyncio.Queue()
        self._turns: CascadeTurns | None = None
        self._answers: dict[str, SpokenAnswer] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._conversation: Messages = []
        self._system_prompt: str | None = None
        self._tool_specs: list[ToolSpec] = []

    # --- Model / BidiModel configuration ---------------------------------------------------------------

    def update_config(self, **model_config: Any) -> None:
        """Update the configuration (``model_id``)."""
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        """The configuration (``model_id``)."""
        return self.config

    def get_audio_config(self) -> AudioConfig:
        """PCM16 mono: 16 kHz in (the listener's rate), 24 kHz out (Kokoro's)."""
        return {
            "input": {"sample_rate": LISTEN_RATE, "channels": 1, "format": "pcm"},
            "output": {"sample_rate": SAMPLE_RATE, "channels": 1, "format": "pcm"},
        }

    # --- the connection ----------------------------------------------------------------------------------

    async def start(
        self,
        system_prompt: str | None = None,
        tools: list[ToolSpec] | None = None,
        messages: Messages | None = None,
        **kwargs: Any,
    ) -> None:
        """Start listening; the conversation so far is ``messages`` (``BidiAgent``'s history)."""
        self._system_prompt = system_prompt
        self._tool_specs = list(tools or [])
        self._conversation = model_messages(messages or [])
        self._out = asyncio.Queue()
        self._turns = CascadeTurns(
            self, self.listen_settings, self._vad, self._turn_model, self._turn_settings
        )
        self._spawn(self._turns.run(), "turns")
        self._spawn(self.recognizer.warm_up(), "recognizer-warm-up")
        self.emit(BidiConnectionStartEvent(uuid.uuid4().hex, self.model_id))

    async def stop(self) -> None:
        """Stop listening and speaking; :meth:`receive` ends."""
        for answer in list(self._answers.values()):
            answer.interrupt()
        if self._turns is not None:
            await self._turns.aclose()
            self._turns = None
        await cancel_and_wait(self._tasks, _CLOSE_GRACE_S)
        self._out.put_nowait(None)

    async def receive(self) -> AsyncIterable[BidiOutputEvent]:
        """The cascade's events, until :meth:`stop`."""
        while (event := await self._out.get()) is not None:
            yield event

    async def send(self, content: BidiMessage | BidiContentDelta) -> None:
        """Caller audio (16 kHz PCM16), a typed user message, or the results of an answer's tool calls."""
        if isinstance(content, AudioDelta):
            audio = content.source.get("bytes")
            if self._turns is not None and audio:
                await self._turns.feed(audio)
            return
        blocks = content.content
        if blocks and all(isinstance(block, ToolResultBlock) for block in blocks):
            self._tool_results(
                [
                    {"toolUseId": block.tool_use_id, "status": block.status, "content": block.content}
                    for block in blocks
                    if isinstance(block, ToolResultBlock)
                ]
            )
            return
        text = " ".join(block.text for block in blocks if isinstance(block, TextBlock)).strip()
        if text and self._turns is not None:
            self._turns.typed(text)

    # --- answers ----------------------------------------------------------------------------------------

    def emit(self, event: BidiOutputEvent) -> None:
        self._out.put_nowait(event)

    def _spawn(self, coroutine: Any, name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(coroutine, name=name)
        self._track(task)
        return task

    def _track(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @property
    def answering(self) -> bool:
        """An answer is being written or spoken."""
        return any(not answer.done.is_set() for answer in self._answers.values())

    def barge_in(self) -> None:
        """Barge in without speaking (a Stop button): the answer being spoken is cut."""
        if self._turns is not None:
            self._turns.stop_pressed()

    # --- the turn adapter's host (strands_voice.cascade._turns) ---------------------------------------

    def start_answer(self, answer_id: str, prompt: str, *, held: bool = False) -> None:
        """Answer ``prompt``: the question joins the model's conversation and the answer starts (``held``:
        a speculation, silent until :meth:`release_answer`; dropped, it leaves no message)."""
        first_message = len(self._conversation)
        self._conversation.append({"role": "user", "content": [{"text": prompt}]})
        self.marks = {k: v for k, v in self.marks.items() if k in ("turn_end", "transcript")}
        turns = self._turns
        parts = AnswerParts(
            answer_id,
            self.model,
            self._system_prompt,
            self._tool_specs,
            self._conversation,
            self.marks,
            first_message=first_message,
            lead_s=self._lead_s,
            on_speaking=None if turns is None else lambda: turns.answer_speaking(answer_id),
            held=held,
        )
        queue = EventQueue(self._max_queued_events)
        response = Response(
            self.options, asyncio.get_running_loop(), self.response_settings, queue, answer_id
        )
        answer = SpokenAnswer(parts, response, queue, self.emit, self._track)
        self._answers[answer_id] = answer
        task = self._spawn(answer.run(), answer_id)
        task.add_done_callback(lambda _: self._answer_ended(answer_id))

    def _answer_ended(self, answer_id: str) -> None:
        self._answers.pop(answer_id, None)
        if self._turns is not None:
            self._turns.answer_ended(answer_id)

    def release_answer(self, answer_id: str) -> None:
        """A held answer goes out (the turn ended with its words)."""
        answer = self._answers.get(answer_id)
        if answer is not None:
            answer.release()

    def hold_answer(self, answer_id: str, hold: bool) -> None:
        """Pause (``hold``) or resume an answer."""
        answer = self._answers.get(answer_id)
        if answer is not None:
            answer.pause() if hold else answer.resume()

    def stop_answer(self, answer_id: str, *, heard: bool) -> None:
        """Barge in on an answer (what was heard is kept) or drop one nothing of which was heard."""
        answer = self._answers.get(answer_id)
        if answer is not None:
            answer.interrupt() if heard else answer.drop()

    def _tool_results(self, results: list[ToolResult]) -> None:
        ids = {result["toolUseId"] for result in results}
        answer = next((a for a in self._answers.values() if ids and ids <= a.pending_tool_ids), None)
        if answer is None:
            logger.debug("tool_use_ids=<%s> | results for a cut answer dropped", sorted(ids))
            return
        answer.tool_results.put_nowait(results)

    @property
    def conversation(self) -> Messages:
        """The model's conversation (what the text model is given; heard text after a barge-in)."""
        return self._conversation
