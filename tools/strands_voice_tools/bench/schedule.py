"""FIFO against deadline scheduling, side by side in one run (``strands-voice bench --schedule``).

One engine, three endpoints on loopback that differ only in ``Settings.scheduling`` and
``Settings.opening_lane``: FIFO, deadline with a newcomer waiting for the running step, and deadline with the
opening lane (the default). For N = 1, 2, 4, 8, the configurations alternate trial by trial: N sessions open
one every ``stagger_s``, each sends a four-sentence answer as one message, and a real-time player on the
client starts at each session's first byte. Per session: time to first audio (from its message) and stall
(time the player waited for audio). Then the endpoint load figure: 16 sessions, each sending the answer's four
sentences as four messages at once, p95 time to first audio (each session closes at its first audio: only that
is timed). The machine's load average is recorded with every figure.
"""

from __future__ import annotations

import asyncio
import datetime
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.errors import TTSRequestError
from strands_voice_protocol.frames import (
    Close,
    ErrorFrame,
    SynthesisComplete,
    Synthesize,
    decode_server_control,
    encode_client_message,
)
from websockets.asyncio.client import connect

from strands_voice_tools.bench.stats import percentile, simulate_playback
from strands_voice_tools.bench.texts import BENCH_TEXT
from strands_voice_tools.machine import describe_machine, load_average

__all__ = ["POLICIES", "ScheduleConfig", "SessionRun", "bench_schedule", "summarize_sessions"]

#: The configurations compared, FIFO first (the "before"), the endpoint's default last.
POLICIES: Final = ("fifo", "deadline, no lane", "deadline")
#: Each configuration's endpoint settings.
POLICY_SETTINGS: Final[dict[str, dict[str, Any]]] = {
    "fifo": {"scheduling": "fifo"},
    "deadline, no lane": {"scheduling": "deadline", "opening_lane": False},
    "deadline": {"scheduling": "deadline", "opening_lane": True},
}

#: Gaps in playback this short are timer noise, not stalls.
STALL_TOLERANCE_S: Final = 0.02


Progress = Callable[[str], None]


@dataclass(frozen=True)
class ScheduleConfig:
    """What the scheduling bench runs.

    Attributes:
        sessions: The staggered session counts.
        stagger_s: Seconds between two sessions' start.
        trials: Rounds per session count and policy.
        text: Each session's answer (sent as one message).
        load_sessions: Sessions of the load figure (each sends the answer's sentences as messages at once).
    """

    sessions: tuple[int, ...] = (1, 2, 4, 8)
    stagger_s: float = 0.7
    trials: int = 1
    text: str = BENCH_TEXT
    load_sessions: int = 16

    @classmethod
    def quick_form(cls) -> ScheduleConfig:
        """A smoke form: 1 and 2 sessions, a two-sentence answer, a 4-session load figure."""
        return cls(sessions=(1, 2), text=". ".join(BENCH_TEXT.split(". ")[:2]) + ".", load_sessions=4)


@dataclass(frozen=True, slots=True)
class SessionRun:
    """One session's first request, on the client's clock.

    Attributes:
        ttfa_s: From sending the message to its first audio byte.
        stall_s: Time a real-time player starting at the first byte waited for audio.
        audio_s: Seconds of audio received.
    """

    ttfa_s: float
    stall_s: float
    audio_s: float


async def _session(url: str, texts: Sequence[str], delay_s: float, first_only: bool = False) -> SessionRun:
    """Open a session after ``delay_s``, send ``texts`` at once, time the first and play them all.

    With ``first_only`` the session closes at its first audio (only the time to first audio is wanted).
    """
    await asyncio.sleep(delay_s)
    async with connect(url, max_size=None, open_timeout=30.0) as ws:
        ids = [uuid.uuid4().hex[:12] for _ in texts]
        started = time.perf_counter()
        for rid, text in zip(ids, texts, strict=True):
            await ws.send(encode_client_message(Synthesize(text=text, request_id=rid)))
        chunks: list[tuple[float, float]] = []
        first_audio: float | None = None
        complete = 0
        while complete < len(ids):
            frame = await ws.recv()
            if isinstance(frame, bytes):
                arrived = time.perf_counter() - started
                first_audio = arrived if first_audio is None else first_audio
                chunks.append((arrived, len(frame) / BYTES_PER_SECOND))
                if first_only:
                    break
                continue
            message = decode_server_control(frame)
            if isinstance(message, ErrorFrame):
                raise TTSRequestError(message.code, message.message, message.request_id)
            if isinstance(message, SynthesisComplete):
                complete += 1
        await ws.send(encode_client_message(Close()))
    if first_audio is None:
        raise TTSRequestError("no_audio", "the session got no audio", ids[0])
    playback = simulate_playback(chunks, tolerance_s=STALL_TOLERANCE_S)
    return SessionRun(first_audio, playback.stall_s, sum(duration for _, duration in chunks))


async def _round(
    url: str, sessions: int, texts: Sequence[str], stagger_s: float, first_only: bool = False
) -> list[SessionRun]:
    async with asyncio.timeout(1800):
        return list(
            await asyncio.gather(
                *(_session(url, texts, index * stagger_s, first_only) for index in range(sessions))
            )
        )


def summarize_sessions(runs: Sequence[SessionRun]) -> dict[str, Any]:
    """p50/p95 time to first audio, stall per session, and how many sessions never stalled."""
    ttfa = [run.ttfa_s for run in runs]
    stalls = [run.stall_s for run in runs]
    return {
        "sessions": len(runs),
        "ttfa_p50_s": round(percentile(ttfa, 50.0), 3),
        "ttfa_p95_s": round(percentile(ttfa, 95.0), 3),
        "stall_mean_s": round(sum(stalls) / len(stalls), 3),
        "stall_max_s": round(max(stalls), 3),
        "zero_stall": sum(1 for stall in stalls if stall == 0.0),
        "ttfa_s": [round(value, 3) for value in ttfa],
        "stall_s": [round(value, 3) for value in stalls],
        "audio_s": round(sum(run.audio_s for run in runs) / len(runs), 2),
    }


async def _compare(
    urls: dict[str, str], config: ScheduleConfig, progress: Progress
) -> dict[str, dict[str, Any]]:
    staggered: dict[str, dict[str, Any]] = {policy: {} for policy in POLICIES}
    for count in config.sessions:
        runs: dict[str, list[SessionRun]] = {policy: [] for policy in POLICIES}
        loads: dict[str, list[Any]] = {policy: [] for policy in POLICIES}
        for trial in range(config.trials):
            order = POLICIES if trial % 2 == 0 else tuple(reversed(POLICIES))
            for policy in order:
                progress(f"scheduling={policy}: {count} staggered session(s), trial {trial + 1}")
                loads[policy].append(load_average())
                runs[policy] += await _round(urls[policy], count, [config.text], config.stagger_s)
        for policy in POLICIES:
            staggered[policy][str(count)] = {
                **summarize_sessions(runs[policy]),
                "load_average": loads[policy],
            }
    return staggered


async def _load_figure(urls: dict[str, str], config: ScheduleConfig, progress: Progress) -> dict[str, Any]:
    sentences = [part if part.endswith(".") else part + "." for part in config.text.split(". ")]
    figure: dict[str, Any] = {"sessions": config.load_sessions, "messages": len(sentences)}
    for policy in POLICIES:
        progress(f"scheduling={policy}: load, {config.load_sessions} sessions x {len(sentences)} messages")
        load = load_average()
        runs = await _round(urls[policy], config.load_sessions, sentences, 0.0, first_only=True)
        figure[policy] = {**summarize_sessions(runs), "load_average": load}
    return figure


async def bench_schedule(engine: Any, config: ScheduleConfig, progress: Progress) -> dict[str, Any]:
    """Serve ``engine`` under each policy and measure both side by side (see the module docstring).

    Returns:
        A JSON-ready mapping: config, machine, ``staggered[policy][N]`` and ``load``.
    """
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import start_server_in_thread
    from kokoro_endpoint.settings import Settings

    started = time.perf_counter()
    results: dict[str, Any] = {
        "schema": "strands-voice-bench-schedule/1",
        "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "config": {
            "sessions": list(config.sessions),
            "stagger_s": config.stagger_s,
            "trials": config.trials,
            "text_chars": len(config.text),
            "load_sessions": config.load_sessions,
        },
        "machine": describe_machine(engine),
    }
    sessions = max(config.load_sessions, *config.sessions)
    # Admission off: this compares how the steps are ordered when more listeners than the engine feeds
    # are admitted (admission itself: scripts/measure_admission.py).
    settings = {
        policy: Settings(**POLICY_SETTINGS[policy], max_sessions=sessions, admission_max_load=None)
        for policy in POLICIES
    }
    servers = {
        policy: start_server_in_thread(create_app(engine=engine, settings=settings[policy]))
        for policy in POLICIES
    }
    try:
        urls = {policy: server.ws_url for policy, server in servers.items()}
        results["staggered"] = await _compare(urls, config, progress)
        results["load"] = await _load_figure(urls, config, progress)
    finally:
        for server in servers.values():
            server.stop()
    results["machine"]["load_average_end"] = load_average()
    results["duration_s"] = round(time.perf_counter() - started, 1)
    return results
