"""A Pipecat voice pipeline in its own process, for ``bench --talk --peers``: ``python -m`` this module.

Pipecat 1.14 set up as its documentation sets up a local voice agent, on the models strands-voice runs:

- transport: ``SingleClientWebsocketServerTransport`` on 127.0.0.1 with :class:`RawPcmSerializer`: a
  binary frame is PCM16 mono audio (the caller's at 16 kHz in, the answer's at 24 kHz out), a text frame a
  JSON event in the ``/ws`` call's words (``listening``, ``interrupted``, the final ``transcript`` of a turn);
- voice activity: ``SileroVADAnalyzer()`` (its defaults: confidence 0.7, start 0.2 s, stop 0.2 s) in the
  user aggregator (``LLMUserAggregatorParams(vad_analyzer=...)``);
- turns: the default ``UserTurnStrategies``: a turn starts on voice activity (or a transcript) and
  interrupts the bot; it ends when Smart Turn v3.2 (``LocalSmartTurnAnalyzerV3``, bundled) judges it
  complete, or after its 3 s silence limit;
- speech to text: ``WhisperSTTService`` on strands-voice's faster-whisper base model folder
  (``whisper_model_dir()``), on the CPU, int8 as strands-voice runs it; every other setting its own
  (English, beam search 5, the segment transcribed once the VAD stops);
- the LLM: ``OpenAILLMService`` against the OpenAI-compatible stand-in the bench serves;
- text to speech: ``KokoroTTSService`` (kokoro-onnx) on the endpoint's int8 model file and voice pack,
  given :data:`STOP_FRAME_TIMEOUT_S` (the one setting changed from Pipecat's defaults).

The process prints one JSON line on stdout, ``{"ready": true, "url": ...}``, once the server accepts
callers, and runs until it is terminated. A caller's ``start`` is answered with ``listening`` and resets the
conversation (each call is a new one).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any, Final

from strands_voice_protocol.errors import MissingDependencyError

try:
    from loguru import logger
    from pipecat.audio.vad.silero import SileroVADAnalyzer
    from pipecat.frames.frames import (
        Frame,
        InputAudioRawFrame,
        InterruptionFrame,
        OutputAudioRawFrame,
        OutputTransportMessageFrame,
        OutputTransportMessageUrgentFrame,
    )
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineWorker
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.processors.aggregators.llm_response_universal import (
        LLMContextAggregatorPair,
        LLMUserAggregatorParams,
    )
    from pipecat.serializers.base_serializer import FrameSerializer
    from pipecat.services.kokoro.tts import KokoroTTSService
    from pipecat.services.openai.llm import OpenAILLMService
    from pipecat.services.whisper.stt import WhisperSTTService
    from pipecat.transcriptions.language import Language
    from pipecat.transports.websocket.server import (
        SingleClientWebsocketServerParams,
        SingleClientWebsocketServerTransport,
    )
    from pipecat.workers.runner import WorkerRunner
except ImportError as error:  # pragma: no cover - depends on the peers group
    raise MissingDependencyError(
        "bench --talk --peers needs pipecat-ai: run `uv sync --group peers`"
    ) from error

__all__ = ["CALLER_RATE", "RawPcmSerializer", "main"]

#: The caller's audio rate (Silero VAD, Smart Turn and Whisper all run at 16 kHz).
CALLER_RATE: Final = 16000
#: The answer's audio rate (Kokoro's own).
ANSWER_RATE: Final = 24000
#: How long the TTS service waits for a sentence's first audio before it drops the sentence. Pipecat's
#: default, 3 s, is shorter than kokoro-onnx takes for a whole sentence on a loaded 2-core CPU (it gives
#: no audio before the sentence is done): the one setting changed, so that every answer is heard.
STOP_FRAME_TIMEOUT_S: Final = 20.0


class RawPcmSerializer(FrameSerializer):
    """Binary frames are raw PCM16 (audio in and out); text frames are JSON events (see the module)."""

    async def serialize(self, frame: Frame) -> str | bytes | None:
        """The answer's audio as raw bytes, an interruption and the bench's own messages as JSON."""
        if isinstance(frame, OutputAudioRawFrame):
            return frame.audio
        if isinstance(frame, InterruptionFrame):
            return json.dumps({"type": "interrupted"})
        if isinstance(frame, OutputTransportMessageFrame | OutputTransportMessageUrgentFrame):
            return None if self.should_ignore_frame(frame) else json.dumps(frame.message)
        return None

    async def deserialize(self, data: str | bytes) -> Frame | None:
        """The caller's audio; a text frame (``start``) carries nothing the pipeline needs."""
        if isinstance(data, bytes):
            return InputAudioRawFrame(audio=data, sample_rate=CALLER_RATE, num_channels=1)
        return None


def _services(llm_url: str, voice: str, system_prompt: str) -> tuple[Any, Any, Any]:
    """Speech to text, the LLM and text to speech (see the module docstring)."""
    from strands_voice.listen import whisper_model_dir
    from strands_voice_tools.bench.peer_kokoro_onnx import kokoro_files

    stt = WhisperSTTService(
        device="cpu",
        compute_type="int8",
        settings=WhisperSTTService.Settings(model=str(whisper_model_dir()), language=Language.EN),
    )
    llm = OpenAILLMService(
        api_key="stand-in",
        base_url=llm_url,
        settings=OpenAILLMService.Settings(model="stand-in", system_instruction=system_prompt),
    )
    with kokoro_files() as (model_path, voices_path):
        tts = KokoroTTSService(
            model_path=str(model_path),
            voices_path=str(voices_path),
            settings=KokoroTTSService.Settings(voice=voice),
            stop_frame_timeout_s=STOP_FRAME_TIMEOUT_S,
        )
    return stt, llm, tts


def build_worker(port: int, llm_url: str, voice: str, system_prompt: str) -> tuple[Any, Any]:
    """The transport and the pipeline's worker; the worker says ``ready`` when the server listens."""
    transport = SingleClientWebsocketServerTransport(
        params=SingleClientWebsocketServerParams(
            audio_in_enabled=True,
            audio_out_enabled=True,
            audio_in_sample_rate=CALLER_RATE,
            audio_out_sample_rate=ANSWER_RATE,
            serializer=RawPcmSerializer(),
            allowed_origins=[],
        ),
        host="127.0.0.1",
        port=port,
    )
    stt, llm, tts = _services(llm_url, voice, system_prompt)
    context = LLMContext()
    pair = LLMContextAggregatorPair(
        context, user_params=LLMUserAggregatorParams(vad_analyzer=SileroVADAnalyzer())
    )
    user, assistant = pair.user(), pair.assistant()
    pipeline = Pipeline([transport.input(), stt, user, llm, tts, transport.output(), assistant])
    worker = PipelineWorker(pipeline, idle_timeout_secs=None)

    async def say(message: dict[str, Any]) -> None:
        await worker.queue_frame(OutputTransportMessageUrgentFrame(message=message))

    async def ready(_transport: Any) -> None:
        sys.stdout.write(json.dumps({"ready": True, "url": f"ws://127.0.0.1:{port}"}) + "\n")
        sys.stdout.flush()

    async def connected(_transport: Any, _socket: Any) -> None:
        context.set_messages([])  # a new call is a new conversation
        await say({"type": "listening", "sample_rate": CALLER_RATE})

    async def turn_stopped(_aggregator: Any, _strategy: Any, message: Any) -> None:
        await say({"type": "transcript", "role": "user", "final": True, "text": message.content or ""})

    transport.add_event_handler("on_websocket_ready", ready)
    transport.add_event_handler("on_client_connected", connected)
    user.add_event_handler("on_user_turn_stopped", turn_stopped)
    return transport, worker


async def _serve(port: int, llm_url: str, voice: str, system_prompt: str) -> None:
    _transport, worker = build_worker(port, llm_url, voice, system_prompt)
    runner = WorkerRunner(handle_sigint=False, handle_sigterm=True)
    await runner.add_workers(worker)
    await runner.run()


def main(argv: list[str] | None = None) -> int:
    """Serve the pipeline on ``--port`` until terminated."""
    from strands_voice_tools.talk.stack import SYSTEM_PROMPT

    parser = argparse.ArgumentParser(prog="peer_pipecat")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--llm-url", required=True, help="the OpenAI-compatible base URL (…/v1)")
    parser.add_argument("--voice", default="jm_kumo")
    args = parser.parse_args(argv)
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    asyncio.run(_serve(args.port, args.llm_url, args.voice, SYSTEM_PROMPT))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
