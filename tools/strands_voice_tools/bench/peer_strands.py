"""strands-voice in its own process, for ``bench --talk``'s calls: ``python -m`` this module.

``--system cascade``: ``VoiceCascade`` under Strands' ``BidiAgent`` (``talk``'s agent), one per call, its
model Strands' ``OpenAIModel`` against the bench's OpenAI-compatible stand-in, the Kokoro endpoint served
in this process. The caller reaches it over a WebSocket in the ``/ws`` call's words: ``start`` is answered
with ``listening``; binary frames in are the caller's PCM16 at 16 kHz (the agent's input stream); out go
each ``BidiAudioDeltaEvent``'s PCM16 (24 kHz) as a binary frame, ``BidiBargeInEvent`` as ``interrupted``
and the end of the caller's transcript as a final ``transcript``. ``--end-of-turn silence`` asks the
listener for its silence timer instead of its turn-end model; ``--speculate off`` starts each answer only
once the turn has ended (the default starts it, held, at a pause whose words look finished).

``--system ws``: the example app (``agentcore_app.app.create_app``, the same model, its default listener)
with the endpoint in this process; the caller uses the app's own ``WS /ws``. Before it says ready, the
worker opens one call and closes it: the app loads Whisper on its first call.

Either prints one JSON line on stdout, ``{"ready": true, "url": ...}``, and serves until terminated.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import dataclasses
import json
import os
import signal
import sys
from typing import Any

from strands.bidi.types.events import (
    BidiAudioDeltaEvent,
    BidiBargeInEvent,
    BidiTranscriptDeltaEvent,
    BidiTranscriptStopEvent,
)
from strands.bidi.types.media import AudioDelta
from strands_voice_protocol.aio.tasks import cancel_and_wait

__all__ = ["listen_settings", "main"]


def listen_settings(end_of_turn: str) -> Any:
    """The listener's settings for ``end_of_turn``: ``model`` (the turn-end model, the default) or
    ``silence`` (the silence timer alone); the one switch between the two."""
    from strands_voice.listen import ListenSettings

    return ListenSettings(end_of_turn="silence" if end_of_turn == "silence" else "model")


class _CallerAudio:
    """``BidiAgent``'s input stream: the caller's frames as they arrive on the socket."""

    def __init__(self) -> None:
        self.frames: asyncio.Queue[bytes] = asyncio.Queue()

    async def start(self, agent: Any) -> None:
        """Nothing to open."""

    async def stop(self) -> None:
        """Nothing to release."""

    async def __call__(self) -> AudioDelta:
        return AudioDelta(format="pcm", source={"bytes": await self.frames.get()})


class _ToCaller:
    """``BidiAgent``'s output stream: audio, barge-ins and the caller's turn ends onto the socket."""

    def __init__(self, socket: Any) -> None:
        self._socket = socket
        self._heard: dict[str, str] = {}  # the caller's words so far, by transcript

    async def start(self, agent: Any) -> None:
        """Nothing to open."""

    async def stop(self) -> None:
        """Nothing to release."""

    async def __call__(self, event: Any) -> None:
        if isinstance(event, BidiAudioDeltaEvent):
            await self._socket.send(base64.b64decode(event.audio))
        elif isinstance(event, BidiBargeInEvent):
            await self._socket.send(json.dumps({"type": "interrupted"}))
        elif isinstance(event, BidiTranscriptDeltaEvent) and event.role == "user":
            self._heard[event.content_id] = self._heard.get(event.content_id, "") + event.delta
        elif isinstance(event, BidiTranscriptStopEvent) and event.role == "user":
            text = self._heard.pop(event.content_id, "")
            final = {"type": "transcript", "role": "user", "final": True, "text": text}
            await self._socket.send(json.dumps(final))


async def _cascade_call(socket: Any, parts: dict[str, Any]) -> None:
    """One call: a fresh cascade and agent, fed from the socket until it closes."""
    from strands_voice_tools.talk.stack import voice_agent

    start = json.loads(await socket.recv())
    if start.get("type") != "start":
        return
    lang = start.get("lang")  # the caller's language and the answers' (None: the voice's)
    settings = parts["settings"]
    if lang:
        settings = dataclasses.replace(settings, language=lang)
    recognizer = parts["recognizer"].hearing(settings.language)
    _cascade, agent = voice_agent(
        parts["model"],
        parts["tts_url"],
        lang=lang,
        settings=settings,
        recognizer=recognizer,
        speculate=parts.get("speculate", True),
    )
    audio = _CallerAudio()
    run = asyncio.create_task(agent.run(inputs=[audio], outputs=[_ToCaller(socket)]))
    await socket.send(json.dumps({"type": "listening", "sample_rate": 16000}))
    try:
        async for message in socket:
            if isinstance(message, bytes):
                audio.frames.put_nowait(message)
    finally:
        await cancel_and_wait([run], 15.0)


async def _serve_cascade(args: argparse.Namespace, stop: asyncio.Event) -> None:
    from agentcore_app.models import close_model, create_model
    from websockets.asyncio.server import serve

    from strands_voice.listen import WhisperRecognizer
    from strands_voice_tools.talk.stack import running_endpoint

    recognizer = WhisperRecognizer()
    await recognizer.warm_up()
    with running_endpoint() as (_engine, tts_url):
        parts = {
            "model": create_model(f"openai:stand-in?base_url={args.llm_url}"),
            "tts_url": tts_url,
            "settings": listen_settings(args.end_of_turn),
            "recognizer": recognizer,
            "speculate": args.speculate == "on",
        }
        async with serve(
            lambda socket: _cascade_call(socket, parts), "127.0.0.1", 0, max_size=None
        ) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            _ready(f"ws://127.0.0.1:{port}")
            await stop.wait()
        await close_model(parts["model"])


async def _serve_app(args: argparse.Namespace, stop: asyncio.Event) -> None:
    from agentcore_app.app import create_app
    from kokoro_endpoint.serving.runner import running_server
    from websockets.asyncio.client import connect

    from strands_voice_tools.talk.stack import running_endpoint

    with running_endpoint() as (_engine, tts_url):
        from agentcore_app.call import CallLimits

        app = create_app(
            tts_url=tts_url,
            model=f"openai:stand-in?base_url={args.llm_url}",
            call_limits=CallLimits(speculate=args.speculate == "on"),
        )
        with running_server(app) as server:
            url = server.base_url.replace("http://", "ws://", 1) + "/ws"
            async with connect(url, max_size=None) as socket:  # the first call loads Whisper
                await socket.send(json.dumps({"type": "start", "sample_rate": 16000}))
                while json.loads(await socket.recv()).get("type") != "listening":
                    pass
            _ready(url)
            await stop.wait()


def _ready(url: str) -> None:
    sys.stdout.write(json.dumps({"ready": True, "url": url}) + "\n")
    sys.stdout.flush()


async def _serve(args: argparse.Namespace) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await (_serve_cascade if args.system == "cascade" else _serve_app)(args, stop)


def main(argv: list[str] | None = None) -> int:
    """Serve strands-voice (see the module docstring) until terminated."""
    parser = argparse.ArgumentParser(prog="peer_strands")
    parser.add_argument("--system", choices=("cascade", "ws"), required=True)
    parser.add_argument("--llm-url", required=True, help="the OpenAI-compatible base URL (…/v1)")
    parser.add_argument("--end-of-turn", choices=("model", "silence"), default="model")
    parser.add_argument("--speculate", choices=("on", "off"), default="on", help="answers held from a pause")
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENAI_API_KEY", "stand-in")  # the stand-in takes any key
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
