"""How fast a barge-in stops everything, on the real local ONNX endpoint.

For each trial an agent (a stand-in model that writes a long answer, a token every 20 ms, for as long as
it is asked) speaks through :class:`~strands_voice.plugin.VoicePlugin` to the real Kokoro endpoint. Once
``--after-chunks`` audio chunks have been delivered (``on_audio``), another thread calls
``handler.interrupt()`` and the probe records, from that call:

- ``last_audio_ms``: the last audio delivered to ``on_audio`` (0 when none came after the call);
- ``audio_end_ms``: the ``audio_end`` event (the response's speech has ended, its session closing);
- ``model_stop_ms``: the model's stream closed by Strands (no more tokens asked for);
- ``tokens_after``: tokens the model was asked for after the call.

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

__all__ = ["BargeInTrial", "main", "run_trial"]

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
        raise NotImplementedError
        yield {}

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


def run_trial(tts_url: str, after_chunks: int = 3) -> BargeInTrial:
    """One agent answer, interrupted after ``after_chunks`` delivered audio chunks."""
    from strands import Agent

    from strands_voice.plugin import VoicePlugin

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


def _summary(name: str, values: list[float]) -> str:
    return f"{name:<15} median {statistics.median(values):7.1f} ms   max {max(values):7.1f} ms"


def main(argv: list[str] | None = None) -> int:
    """Run the trials against an endpoint started here (the real ONNX engine) and print the figures."""
    parser = argparse.ArgumentParser(prog="python -m strands_voice_tools.bench.barge_in")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--after-chunks", type=int, default=3, help="audio chunks delivered before Stop")
    args = parser.parse_args(argv)

    from kokoro_endpoint.app import create_app
    from kokoro_endpoint.runner import running_server

    from strands_voice_tools.demo.stack import load_tts_engine

    engine = load_tts_engine()
    trials: list[BargeInTrial] = []
    with running_server(create_app(engine=engine)) as server:
        for number in range(args.trials):
            trial = run_trial(server.ws_url, args.after_chunks)
            trials.append(trial)
            print(
                f"trial {number + 1}: last audio {trial.last_audio_ms:.1f} ms, audio_end "
                f"{trial.audio_end_ms:.1f} ms, model stopped {trial.model_stop_ms:.1f} ms, "
                f"{trial.tokens_after} token(s) after, stop_reason={trial.stop_reason}, "
                f"remembered {trial.remembered[:60]!r}"
            )
    print(_summary("last audio", [t.last_audio_ms for t in trials]))
    print(_summary("audio_end", [t.audio_end_ms for t in trials]))
    print(_summary("model stopped", [t.model_stop_ms for t in trials]))
    print(f"tokens after    max {max(t.tokens_after for t in trials)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
