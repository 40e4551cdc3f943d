"""``strands-voice talk``: a spoken conversation with a Strands agent through ``VoiceCascade``.

On a laptop it talks through the machine's microphone and speakers (:class:`strands_voice.Microphone`,
:class:`strands_voice.Speakers`: PortAudio, the ``speakers`` group), with the speakers' echo cancelled
from the microphone (WebRTC AEC3; ``--no-aec`` with headphones), a status line (listening / thinking /
speaking) and what it heard and said printed as it goes. Offline by default: the scripted model (or
``--model SPEC`` as in ``demo``), faster-whisper, the ONNX Kokoro endpoint on loopback.
``--runtime-arn ARN`` holds the conversation with the app deployed on AgentCore Runtime instead (its
``/ws``, signed with SigV4: :mod:`.on_runtime`). ``--input question.wav --output answer.wav`` is the
same conversation for a machine without audio devices: the WAV is played to the agent at real-time speed
as the caller, and the agent's spoken answers are written to the output WAV (24 kHz).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from strands_voice_protocol.errors import StrandsVoiceError
from strands_voice_protocol.languages import KOKORO_LANGUAGES

from strands_voice_tools.runtime.options import add_runtime_options

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``talk`` options to ``parser``."""
    parser.add_argument(
        "--model", metavar="SPEC", default=None, help="the LLM, as in `demo` (default: scripted)"
    )
    parser.add_argument(
        "--voice", default=None, help="the Kokoro voice (default: jm_kumo here, the app's own on a runtime)"
    )
    parser.add_argument(
        "--lang",
        choices=sorted(KOKORO_LANGUAGES),
        default=None,
        help="the language spoken and heard: a Kokoro letter (j Japanese, e Spanish, ...; default: the "
        "voice's, as the endpoint reads it: jm_kumo speaks English)",
    )
    parser.add_argument("--tts-url", default=None, help="an endpoint to use instead of starting one")
    parser.add_argument("--input", type=Path, help="a WAV to say to the agent (instead of the microphone)")
    parser.add_argument("--output", type=Path, help="write the agent's spoken answers to this WAV (24 kHz)")
    parser.add_argument(
        "--input-device",
        metavar="DEVICE",
        default=None,
        help="the microphone: a name or index (default: the system's)",
    )
    parser.add_argument(
        "--output-device",
        metavar="DEVICE",
        default=None,
        help="the speakers: a name or index (default: the system's)",
    )
    parser.add_argument(
        "--no-aec",
        action="store_true",
        help="do not cancel the speakers' echo from the microphone (with headphones)",
    )
    parser.add_argument(
        "--noise-suppression", action="store_true", help="suppress steady background noise in the microphone"
    )
    parser.add_argument(
        "--no-speculation",
        action="store_true",
        help="start an answer only once the turn has ended (default: at a pause whose words look finished, "
        "held until the turn ends)",
    )
    runtime = parser.add_argument_group(
        "a deployed runtime", "talk with the app on AgentCore Runtime instead of a local agent"
    )
    add_runtime_options(runtime, arn_help="the runtime's ARN (its /ws, signed with SigV4)")
    runtime.add_argument(
        "--session-id",
        help="continue this runtime session's conversation (default: a new one, 33+ characters)",
    )


def _say(line: str) -> None:
    print(line, flush=True)


def run(args: argparse.Namespace) -> int:
    """Hold the conversation; returns 0.

    Raises:
        StrandsVoiceError: bad arguments, or a part failed to start (the CLI prints it and exits 1).
    """
    if args.runtime_arn:
        from strands_voice_tools.talk.on_runtime import talk_on_runtime

        return talk_on_runtime(args)
    from agentcore_app.models import create_model

    if (args.input is None) != (args.output is None):
        raise StrandsVoiceError("give both --input and --output (or neither, for microphone and speakers)")
    model = create_model(args.model or "scripted")
    if args.input is not None:
        from strands_voice_tools.talk.streams import read_wav_16k

        question = read_wav_16k(Path(args.input).read_bytes())
        asyncio.run(_talk_files(model, question, args))
        return 0
    try:
        asyncio.run(_talk_live(model, args))
    except KeyboardInterrupt:  # pragma: no cover - interactive: Ctrl-C ends the conversation
        pass
    return 0


async def _talk_files(model: Any, question: bytes, args: argparse.Namespace) -> None:
    from strands_voice_protocol.audio.wav import write_wav

    from strands_voice_tools.talk.stack import DEFAULT_VOICE, talk_stack
    from strands_voice_tools.talk.streams import AnswerRecorder, PacedInput

    with talk_stack(
        model,
        voice=args.voice or DEFAULT_VOICE,
        lang=args.lang,
        tts_url=args.tts_url,
        speculate=not args.no_speculation,
    ) as stack:
        await stack.cascade.recognizer.warm_up()
        mic, recorder = PacedInput(), AnswerRecorder(show=_say)
        task = asyncio.create_task(stack.agent.run(inputs=[mic], outputs=[recorder]))
        try:
            mic.say(question)
            await recorder.answer_ended(within_s=len(question) / 32000 + 120)
        finally:
            task.cancel()
            await asyncio.wait([task], timeout=15)
    write_wav(args.output, recorder.audio())
    print(f"wrote {args.output}", file=sys.stderr, flush=True)


async def _talk_live(model: Any, args: argparse.Namespace) -> None:
    from strands_voice_tools.talk.stack import DEFAULT_VOICE, talk_stack
    from strands_voice_tools.talk.status import StatusLine
    from strands_voice_tools.talk.streams import laptop_devices

    # The devices first: a missing one (or a missing package) is said before the models load.
    with (
        laptop_devices(args) as (speakers, microphone),
        talk_stack(
            model,
            voice=args.voice or DEFAULT_VOICE,
            lang=args.lang,
            tts_url=args.tts_url,
            speculate=not args.no_speculation,
        ) as stack,
    ):
        await stack.cascade.recognizer.warm_up()
        aec = "off" if args.no_aec else "on"
        print(
            f"microphone: {microphone.device['name']}, speakers: {speakers.device['name']}, "
            f"echo cancellation: {aec} (Ctrl-C ends)",
            file=sys.stderr,
            flush=True,
        )
        await stack.agent.run(inputs=[microphone], outputs=[speakers.output(), StatusLine(speakers)])
