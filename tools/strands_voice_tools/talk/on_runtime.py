"""``strands-voice talk --runtime-arn ARN``: the conversation with a deployed runtime (see :mod:`.remote`).

With ``--input/--output`` the WAV is said at real-time pace and the first answer's audio is written (as the
local ``talk`` does); otherwise the microphone and speakers hold the call until Ctrl-C. The connection is
signed with the default AWS credentials (:mod:`strands_voice_tools.runtime.signing`); a refusal or an
unreachable runtime is one line (a :class:`StrandsVoiceError`), not a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.errors import StrandsVoiceError

from strands_voice_tools.runtime.connect import open_runtime_socket
from strands_voice_tools.runtime.options import target_from_args
from strands_voice_tools.runtime.signing import RuntimeTarget, Signer, new_session_id
from strands_voice_tools.talk.remote import RuntimeCall

__all__ = ["talk_on_runtime"]


def _say(line: str) -> None:
    print(line, flush=True)


def talk_on_runtime(args: argparse.Namespace) -> int:
    """Hold the conversation with ``args.runtime_arn``; returns 0.

    Raises:
        StrandsVoiceError: bad arguments, no credentials, the runtime refused or could not be reached.
    """
    if (args.input is None) != (args.output is None):
        raise StrandsVoiceError("give both --input and --output (or neither, for microphone and speakers)")
    target = target_from_args(args)
    signer = Signer()
    session = args.session_id or new_session_id("strands-voice-talk")
    settings = {"voice": args.voice} if args.voice else {}
    if args.input is not None:
        from strands_voice_tools.talk.streams import read_wav_16k

        question = read_wav_16k(Path(args.input).read_bytes())
        asyncio.run(_talk_files(target, signer, session, settings, question, args.output))
        return 0
    try:
        asyncio.run(_talk_live(target, signer, session, settings, args))
    except KeyboardInterrupt:  # pragma: no cover - interactive: Ctrl-C ends the conversation
        pass
    return 0


async def _connect(target: RuntimeTarget, signer: Signer, session: str) -> Any:
    """The signed socket; says which runtime and session once connected (a refusal is the only line)."""
    socket = await open_runtime_socket(target, signer, session)
    print(f"connected to {target.arn}, session {session}", file=sys.stderr, flush=True)
    return socket


async def _talk_files(
    target: RuntimeTarget,
    signer: Signer,
    session: str,
    settings: dict[str, Any],
    question: bytes,
    output: Path,
) -> None:
    from strands_voice_protocol.audio.wav import write_wav

    from strands_voice_tools.talk.streams import AnswerRecorder, PacedInput

    socket = await _connect(target, signer, session)
    mic, recorder = PacedInput(), AnswerRecorder(show=_say)
    call = RuntimeCall(socket, [mic], [recorder])
    try:
        await call.start(settings)
        mic.say(question)
        answered = asyncio.create_task(recorder.answer_ended(within_s=len(question) / 32000 + 120))
        closed = asyncio.create_task(call.wait_closed())
        await asyncio.wait([answered, closed], return_when=asyncio.FIRST_COMPLETED)
        await cancel_and_wait([answered, closed], 5.0)
        if answered.cancelled() or answered.exception() is not None:
            raise StrandsVoiceError("the runtime ended the call before it answered")
    finally:
        await call.close()
    write_wav(output, recorder.audio())
    print(f"wrote {output}", file=sys.stderr, flush=True)


async def _talk_live(
    target: RuntimeTarget, signer: Signer, session: str, settings: dict[str, Any], args: argparse.Namespace
) -> None:
    from strands_voice_tools.talk.status import StatusLine
    from strands_voice_tools.talk.streams import laptop_devices

    with laptop_devices(args) as (speakers, microphone):
        socket = await _connect(target, signer, session)
        call = RuntimeCall(socket, [microphone], [speakers.output(), StatusLine(speakers)])
        await call.start(settings)
        print("listening (Ctrl-C ends)", file=sys.stderr, flush=True)
        try:
            await call.wait_closed()
        finally:
            await call.close()
