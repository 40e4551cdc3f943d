"""A TTS connection cut mid-sentence, against an endpoint that does not know ``skip_samples`` (its
``synthesis_start`` has no echo): the session replays the sentence and the handler says so.

The caller gets one ``sentence_restart`` event (so a player drops what it holds of that sentence), the
sentence's audio again from its start, and a ``sentence_complete`` whose duration counts the replay only.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from typing import Any

from agentcore_app.scripted import ScriptedModel
from strands import Agent
from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.leg3_client import Leg3Recorder
from strands_voice_protocol.sse import encode_sse
from websockets.asyncio.server import ServerConnection, serve

from strands_voice.agent._run_voice import run_voice
from strands_voice.transports._websocket import WebSocketTransport

SENTENCE = "One sentence that is cut and said again."
CUT_BYTES = 4_800  # 0.1 s of pcm16 before the cut
WHOLE_BYTES = 19_200  # 0.4 s: the replayed sentence


def _control(kind: str, rid: str, **fields: Any) -> str:
    return json.dumps({"type": kind, "request_id": rid, **fields})


async def _cut_mid_audio(ws: ServerConnection) -> None:
    rid = json.loads(await ws.recv())["request_id"]
    await ws.send(_control("synthesis_start", rid, format="pcm16", sample_rate=24_000, channels=1))
    await ws.send(b"\x01\x00" * (CUT_BYTES // 2))
    ws.transport.abort()  # no close frame: the connection is simply gone


async def _answer_whole(ws: ServerConnection) -> None:
    with contextlib.suppress(Exception):
        while True:
            message = json.loads(await ws.recv())
            if message.get("type") != "synthesize":
                continue
            rid = message["request_id"]
            await ws.send(_control("synthesis_start", rid, format="pcm16", sample_rate=24_000, channels=1))
            await ws.send(b"\x02\x00" * (WHOLE_BYTES // 2))
            await ws.send(
                _control(
                    "synthesis_complete",
                    rid,
                    audio_bytes=WHOLE_BYTES,
                    total_duration_s=WHOLE_BYTES / BYTES_PER_SECOND,
                    elapsed_s=0.01,
                )
            )


def test_sentence_cut_mid_audio_is_restarted_once_and_counted_once() -> None:
    connections = 0

    async def handle(ws: ServerConnection) -> None:
        nonlocal connections
        connections += 1
        await (_cut_mid_audio(ws) if connections == 1 else _answer_whole(ws))

    async def main() -> list[dict[str, Any]]:
        async with serve(handle, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            url = f"ws://127.0.0.1:{port}/invocations-bidirectional-stream"
            agent = Agent(
                model=ScriptedModel(text=SENTENCE, first_sentence_s=0.1, total_s=0.2), callback_handler=None
            )
            events: list[dict[str, Any]] = []
            stream = run_voice(agent, "Go.", transport_factory=lambda: WebSocketTransport(url))
            async with asyncio.timeout(60), contextlib.aclosing(stream):
                async for event in stream:
                    events.append(event)
            return events

    events = asyncio.run(main())
    kinds = [e["type"] for e in events]
    assert "error" not in kinds and kinds[-1] == "agent_end"
    assert connections == 2
    (restart,) = [e for e in events if e["type"] == "sentence_restart"]
    assert restart["sentence"] == 0 and restart["dropped_s"] == CUT_BYTES / BYTES_PER_SECOND
    at = kinds.index("sentence_restart")
    before = [base64.b64decode(e["data"]) for e in events[:at] if e["type"] == "audio_chunk"]
    after = [base64.b64decode(e["data"]) for e in events[at:] if e["type"] == "audio_chunk"]
    assert b"".join(before) == b"\x01\x00" * (CUT_BYTES // 2)
    assert b"".join(after) == b"\x02\x00" * (WHOLE_BYTES // 2)
    (done,) = [e for e in events if e["type"] == "sentence_complete"]
    assert done["sentence"] == 0 and done["text"] == SENTENCE
    assert done["duration_s"] == WHOLE_BYTES / BYTES_PER_SECOND  # the replay only
    # What the listener gets: the void partial is not counted in the answer's duration either.
    (end,) = [e for e in events if e["type"] == "audio_end"]
    assert end["duration_s"] == WHOLE_BYTES / BYTES_PER_SECOND
    # The one Leg 3 client (the demo's WAVs, the bench's timelines) drops the partial too.
    recorder = Leg3Recorder("bidi")
    recorder.feed(b"".join(encode_sse(event) for event in events), 0.0)
    result = recorder.close(0.0)
    assert result.encoded_audio == b"\x02\x00" * (WHOLE_BYTES // 2)
    assert result.restarted_bytes == CUT_BYTES
