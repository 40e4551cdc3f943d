"""Bytes on the wire per second of audio: a spoken call's binary frames (``WS /ws``) beside the SSE route's
base64 ``audio_chunk`` events (``POST /invocations``), for pcm16 and opus. Not a test: a measurement.

The real app answers one typed question over each route with the real Kokoro endpoint (ONNX) and the
scripted model; the audio-bearing bytes are counted as they travel: on ``/ws`` each binary frame's payload
plus its WebSocket header (2 bytes up to 125, 4 up to 65,535, 10 beyond; server frames are unmasked), on
SSE each ``data: {json}\\n\\n`` frame of an ``audio_chunk`` event (base64 audio and its JSON). Both are
divided by the answer's ``audio_end.duration_s``. TCP/TLS overhead is the same on both and left out::

    uv run python scripts/measure_call_payload.py docs/benchmarks/call_payload.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The tests' shared helpers (tests/support) drive the call.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.call import START, Caller, scripted_listeners

ANSWER = (
    "The Premium plan costs $24.99 per month, and you can cancel at any time. "
    "It includes unlimited cloud storage for your photos. "
    "You also get priority support, day and night."
)
PROMPT = "What does the Premium plan include?"


def ws_header(length: int) -> int:
    """The WebSocket header of an unmasked server frame with a ``length``-byte payload (RFC 6455 5.2)."""
    return 2 if length <= 125 else 4 if length <= 65_535 else 10


def over_sse(base_url: str, audio_format: str) -> dict[str, float]:
    """One answer over ``POST /invocations``: its audio_chunk frames' bytes, per second of audio."""
    import httpx
    from strands_voice_protocol.sse import SSEDecoder, encode_sse

    decoder, events = SSEDecoder(), []
    payload = {"prompt": PROMPT, "format": audio_format}
    with (
        httpx.Client(timeout=httpx.Timeout(10.0, read=300.0)) as client,
        client.stream("POST", f"{base_url}/invocations", json=payload) as response,
    ):
        for data in response.iter_raw():
            events.extend(event.json() for event in decoder.feed(data))
    audio = [e for e in events if e["type"] == "audio_chunk"]
    seconds = next(e for e in events if e["type"] == "audio_end")["duration_s"]
    wire = sum(len(encode_sse(e)) for e in audio)
    return {"audio_s": seconds, "frames": len(audio), "bytes": wire, "bytes_per_audio_s": wire / seconds}


async def over_ws(ws_url: str, audio_format: str) -> dict[str, float]:
    """One answer over ``WS /ws``: its binary frames' bytes (payload and header), per second of audio."""
    caller = await Caller.open(ws_url)
    await caller.send({**START, "format": audio_format})
    await caller.wait_for("listening")
    await caller.send({"type": "prompt", "prompt": PROMPT})
    await caller.wait_for("agent_end", within_s=300.0)
    await caller.close()
    seconds = caller.of("audio_end")[0]["duration_s"]
    wire = sum(len(data) + ws_header(len(data)) for _at, data in caller.audio)
    frames = len(caller.audio)
    return {"audio_s": seconds, "frames": frames, "bytes": wire, "bytes_per_audio_s": wire / seconds}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?", default=Path("artifacts/call_payload.json"))
    args = parser.parse_args()
    from agentcore_app.app import create_app
    from agentcore_app.conversation import ConversationStore
    from agentcore_app.scripted import ScriptedModel
    from kokoro_endpoint.engines.loader import load_engine
    from kokoro_endpoint.serving.app import create_app as create_endpoint
    from kokoro_endpoint.serving.runner import running_server

    engine = load_engine("onnx")
    engine.warm_up()
    results: dict[str, Any] = {"answer": ANSWER, "routes": {}}
    with running_server(create_endpoint(engine=engine)) as endpoint:
        app = create_app(
            tts_url=endpoint.ws_url,
            model=ScriptedModel(text=ANSWER, first_sentence_s=0.3, total_s=1.0),
            conversation_store=ConversationStore(kind="none"),
            silence_timeout=300.0,
            listener_factory=scripted_listeners(["unused"]),
        )
        logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
        with running_server(app) as server:
            ws_url = server.base_url.replace("http://", "ws://") + "/ws"
            for audio_format in ("pcm16", "opus"):
                results["routes"][f"sse_{audio_format}"] = over_sse(server.base_url, audio_format)
                results["routes"][f"ws_{audio_format}"] = asyncio.run(over_ws(ws_url, audio_format))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    for name, figures in results["routes"].items():
        rate, frames = figures["bytes_per_audio_s"], figures["frames"]
        print(f"{name:10s} {rate:9,.0f} B per second of audio ({frames} frames)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
