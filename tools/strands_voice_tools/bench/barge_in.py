"""How fast a barge-in stops everything, on the real local ONNX endpoint.

For each trial an agent (a stand-in model that writes a long answer, a token every 20 ms, for as long as
it is asked) speaks through :class:`~strands_voice.agent.VoicePlugin` to the real Kokoro endpoint. Once
``--after-chunks`` audio chunks have been delivered (``on_audio``), another thread calls
``handler.interrupt()`` and the probe records, from that call:

- ``last_audio_ms``: the last audio delivered to ``on_audio`` (0 when none came after the call);
- ``audio_end_ms``: the ``audio_end`` event (the response's speech has ended, its session closing);
- ``model_stop_ms``: the model's stream closed by Strands (no more tokens asked for);
- ``tokens_after``: tokens the model was asked for after the call.

With ``--stream`` the answer runs under ``handler.stream()`` (what the AgentCore app does) and the
consumer barges in itself; ``stream_end_ms`` is then the stream's last event (``agent_end``): when a new
question on the same session may start.

Run it (a few minutes; the figures depend on the machine's load, say how busy it was)::

    uv run python -m strands_voice_tools.bench.barge_in --trials 5
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time
from collections.abc import AsyncIterable
from dataclasses import dataclass
from typing import Any

from strands.models.model import Model

__all__ = ["BargeInTrial", "main", "run_stream_trial", "run_trial"]

_SENTENCE = "This sentence is one of many in a long answer that goes on for as long as the agent is asked. "
_GUARD_S = 120.0


class _EndlessModel(Model):
    """Writes ``_SENTENCE`` again and again, a token every 20 ms; notes when it is asked and closed."""

    def __init__(self) -> None:
        self.config: dict[str, Any] = {"model_id": "endless"}
        self.token_times: list[float] = []
        self.closed_at: float | None = None

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return self.config

    async def structured_output(
        self, output_model: Any, prompt: Any, system_prompt: str | None = None, **kwargs: Any
    ) -> Any:
        raise NotImplementedError("the endless stand-in streams text only; it has no structured output")
        yield {}  # pragma: no cover - makes this an async generator

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncIterable[Any]:
        try:
            yield {"messageStart": {"role": "assistant"}}
            yield {"contentBlockStart": {"start": {}}}
            deadline = time.perf_counter() + _GUARD_S
            while time.perf_counter() < deadline:
                for word in _SENTENCE.split(" "):
                    self.token_times.append(time.perf_counter())
                    yield {"contentBlockDelta": {"delta": {"text": word + " "}}}
                    await asyncio.sleep(0.02)
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        finally:
            self.closed_at = time.perf_counter()


@dataclass
class BargeInTrial:
    """One barge-in's figures, in ms from the ``interrupt()`` call (see the module docstring)."""

    last_audio_ms: float
    audio_end_ms: float
    model_stop_ms: float
    tokens_after: int
    stop_reason: str
    remembered: str
    stream_end_ms: float | None = None


def run_trial(tts_url: str, after_chunks: int = 3) -> BargeInTrial:
    """One agent answer, interrupted after ``after_chunks`` delivered audio chunks."""
    from strands import Agent

    from strands_voice.agent import VoicePlugin

    audio_times: list[float] = []
    audio_end: list[float] = []
    enough = threading.Event()

    def on_audio(_data: bytes) -> None:
        audio_times.append(time.perf_counter())
        if len(audio_times) >= after_chunks:
            enough.set()

    def on_event(event: Any) -> None:
        if event["type"] == "audio_end":
            audio_end.append(time.perf_counter())

    model = _EndlessModel()
    plugin = VoicePlugin(tts_url, on_audio=on_audio, on_event=on_event, silence_timeout=_GUARD_S)
    agent = Agent(model=model, plugins=[plugin], callback_handler=None)
    interrupted_at: list[float] = []

    def barge_in() -> None:
        if enough.wait(_GUARD_S):
            interrupted_at.append(time.perf_counter())
            plugin.handler.interrupt()

    thread = threading.Thread(target=barge_in, daemon=True)
    thread.start()
    result = agent("Talk for a while.")
    plugin.handler.wait(_GUARD_S)
    plugin.handler.close()
    thread.join(_GUARD_S)
    if not interrupted_at or model.closed_at is None or not audio_end:
        raise RuntimeError("the trial did not barge in (no audio?)")
    t0 = interrupted_at[0]
    last_audio = max(audio_times)
    return BargeInTrial(
        last_audio_ms=max(0.0, (last_audio - t0) * 1000),
        audio_end_ms=(audio_end[-1] - t0) * 1000,
        model_stop_ms=(model.closed_at - t0) * 1000,
        tokens_after=sum(1 for t in model.token_times if t > t0),
        stop_reason=str(result.stop_reason),
        remembered=str(agent.messages[-1]["content"][0].get("text", "")),
    )


def run_stream_trial(tts_url: str, after_chunks: int = 3) -> BargeInTrial:
    """:func:`run_trial` under ``handler.stream()``: the consumer interrupts after ``after_chunks``."""
    from strands import Agent

    from strands_voice.agent import VoiceCallbackHandler

    model = _EndlessModel()
    agent = Agent(model=model, callback_handler=None)
    voice = VoiceCallbackHandler(tts_url, silence_timeout=_GUARD_S)
    times: dict[str, float] = {}

    async def consume() -> None:
        chunks = 0
        async for event in voice.stream(agent, "Talk for a while."):
            now = time.perf_counter()
            if event["type"] == "audio_chunk":
                times["last_audio"] = now
                chunks += 1
                if chunks == after_chunks and "interrupt" not in times:
                    times["interrupt"] = time.perf_counter()
                    voice.interrupt()
            elif event["type"] in ("audio_end", "agent_end"):
                times[event["type"]] = now

    asyncio.run(asyncio.wait_for(consume(), _GUARD_S))
    voice.close()
    if "interrupt" not in times or model.closed_at is None:
        raise RuntimeError("the trial did not barge in (no audio?)")
    t0 = times["interrupt"]
    return BargeInTrial(
        last_audio_ms=max(0.0, (times["last_audio"] - t0) * 1000),
        audio_end_ms=(times["audio_end"] - t0) * 1000,
        model_stop_ms=(model.closed_at - t0) * 1000,
        tokens_after=sum(1 for t in model.token_times if t > t0),
        stop_reason="-",  # stream() yields Leg 3 events, not the agent's result
        remembered=str(agent.messages[-1]["content"][0].get("text", "")),
        stream_end_ms=(times["agent_end"] - t0) * 1000,
    )


def _summary(name: str, values: list[float]) -> str:
    return f"{name:<15} median {statistics.median(values):7.1f} ms   max {max(values):7.1f} ms"


def main(argv: list[str] | None = None) -> int:
    """Run the trials against an endpoint started here (the real ONNX engine) and print the figures."""
    parser = argparse.ArgumentParser(prog="python -m strands_voice_tools.bench.barge_in")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--after-chunks", type=int, default=3, help="audio chunks delivered before Stop")
    parser.add_argument("--stream", action="store_true", help="under handler.stream(), as the app runs")
    args = parser.parse_args(argv)

    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server

    from strands_voice_tools.demo.stack import load_tts_engine

    engine = load_tts_engine()
    trials: list[BargeInTrial] = []
    with running_server(create_app(engine=engine)) as server:
        for number in range(args.trials):
            trial = (run_stream_trial if args.stream else run_trial)(server.ws_url, args.after_chunks)
            trials.append(trial)
            print(
                f"trial {number + 1}: last audio {trial.last_audio_ms:.1f} ms, audio_end "
                f"{trial.audio_end_ms:.1f} ms, model stopped {trial.model_stop_ms:.1f} ms, "
                f"{trial.tokens_after} token(s) after, stop_reason={trial.stop_reason}, "
                + ("" if trial.stream_end_ms is None else f"stream end {trial.stream_end_ms:.1f} ms, ")
                + f"remembered {trial.remembered[:60]!r}"
            )
    print(_summary("last audio", [t.last_audio_ms for t in trials]))
    print(_summary("audio_end", [t.audio_end_ms for t in trials]))
    print(_summary("model stopped", [t.model_stop_ms for t in trials]))
    if args.stream:
        print(_summary("stream end", [t.stream_end_ms or 0.0 for t in trials]))
    print(f"tokens after    max {max(t.tokens_after for t in trials)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
