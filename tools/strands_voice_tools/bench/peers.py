"""strands-voice beside kokoro-onnx, side by side in one run (``strands-voice bench --peers``).

Two processes, each with its own memory: the real endpoint (``python -m kokoro_endpoint.cli --engine onnx``),
timed over Leg 1 by the thinnest client (:mod:`.endpoint_probe`), and kokoro-onnx's streaming API
(``Kokoro.create_stream``) in :mod:`.peer_kokoro_onnx`. Both load the same int8 model file and the same
voice pack. For each text (a 44- and a 197-character sentence, the 267-character four-sentence answer) the
two alternate trial by trial (A B, B A, ...), after untimed warm-ups. Per peer: time to first audio and to
first audible sound (medians), the real-time factor of the whole answer (time to its end over its audio
seconds; below 1 is faster than real time) and the process's peak resident memory (``VmHWM``).
"""

from __future__ import annotations

import datetime
import importlib.util
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from strands_voice_protocol.errors import StrandsVoiceError

from strands_voice_tools.bench.peer_processes import EndpointPeer, KokoroOnnxPeer, Peer, PeerRun
from strands_voice_tools.bench.stats import median_or_none
from strands_voice_tools.bench.texts import BENCH_TEXT, HEARD_LONG, HEARD_SHORT
from strands_voice_tools.machine import describe_machine, load_average, package_version

__all__ = [
    "PEERS",
    "TUNED",
    "PeerRun",
    "PeersConfig",
    "bench_peers",
    "peak_rss_mb",
    "summarize_peer",
    "trial_order",
]

#: The peers, strands-voice first.
PEERS: Final = ("strands-voice", "kokoro-onnx")
#: kokoro-onnx given the endpoint's graph and session options (``--peers-tuned``): where a gap comes from.
TUNED: Final = "kokoro-onnx, endpoint graph"
#: How each peer turns text into phonemes (the figures include it).
G2P: Final = {
    "strands-voice": "misaki (+ espeak-ng fallback)",
    "kokoro-onnx": "espeak-ng (phonemizer)",
    TUNED: "espeak-ng (phonemizer)",
}
Progress = Callable[[str], None]


@dataclass(frozen=True)
class PeersConfig:
    """What ``bench --peers`` runs.

    Attributes:
        trials: Timed trials per text and peer.
        warmups: Untimed trials first.
        peers: The peers, in their first trial's order (:data:`PEERS`, and :data:`TUNED` if asked).
        voice: The voice pack both peers speak with.
        texts: (label, text) pairs; the answer (``BENCH_TEXT``) gives the real-time factor.
        isa: Run both peers on an older instruction set's kernels (``avx2``, ``avx512``: :mod:`.isa`);
            None runs them on this CPU's own.
    """

    trials: int = 5
    warmups: int = 1
    voice: str = "jm_kumo"
    texts: tuple[tuple[str, str], ...] = (
        ("short", HEARD_SHORT),
        ("long", HEARD_LONG),
        ("answer", BENCH_TEXT),
    )
    peers: tuple[str, ...] = PEERS
    isa: str | None = None


def trial_order(trial: int, peers: Sequence[str] = PEERS) -> tuple[str, ...]:
    """The order the peers run in on ``trial``: as given on even trials, reversed on odd ones."""
    return tuple(peers) if trial % 2 == 0 else tuple(reversed(peers))


def peak_rss_mb(pid: int) -> float | None:
    """A process's peak resident memory in MB (``VmHWM`` of /proc/<pid>/status), None where unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def summarize_peer(
    name: str, texts: Sequence[tuple[str, str]], runs: dict[str, list[PeerRun]]
) -> dict[str, Any]:
    """One peer's figures: medians per text, the headline fields, and every trial.

    ``first_audio_ms``/``first_heard_ms`` are the first text's (the short sentence), ``_long``/``_answer``
    suffixed the others'; ``rtf`` is the answer's (the last text's) median time to its end over its audio.
    """
    entry: dict[str, Any] = {"name": name, "g2p": G2P.get(name)}
    per_text: dict[str, Any] = {}
    for index, (label, text) in enumerate(texts):
        trials = runs.get(label, [])
        first = [run.first_audio_s * 1e3 for run in trials]
        heard = [run.first_heard_s * 1e3 for run in trials if run.first_heard_s is not None]
        rtf = [run.total_s / run.audio_s for run in trials if run.audio_s > 0]
        per_text[label] = {
            "chars": len(text),
            "first_audio_ms": [round(value, 1) for value in first],
            "first_heard_ms": [round(value, 1) for value in heard],
            "total_ms": [round(run.total_s * 1e3, 1) for run in trials],
            "audio_s": [round(run.audio_s, 3) for run in trials],
            "rtf": [round(value, 3) for value in rtf],
        }
        suffix = "" if index == 0 else f"_{label}"
        entry[f"first_audio_ms{suffix}"] = _rounded(median_or_none(first), 1)
        entry[f"first_heard_ms{suffix}"] = _rounded(median_or_none(heard), 1)
        if index == len(texts) - 1:
            entry["rtf"] = _rounded(median_or_none(rtf), 3)
            entry["rtf_text"] = label
    entry["texts"] = per_text
    return entry


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


async def _alternate(
    peers: dict[str, Peer], config: PeersConfig, progress: Progress
) -> dict[str, dict[str, list[PeerRun]]]:
    """Every text, the peers alternated trial by trial: runs per peer and text label, the warm-up trials
    (the first request of each text, the cost a peer that does not warm up at start pays then) under
    ``warm-up/<label>``."""
    runs: dict[str, dict[str, list[PeerRun]]] = {name: {} for name in peers}
    for label, text in config.texts:
        for trial in range(config.warmups + config.trials):
            timed = trial >= config.warmups
            for name in trial_order(trial, tuple(peers)):
                what = f"trial {trial - config.warmups + 1}" if timed else "warm-up"
                progress(f"{name}: {label} ({len(text)} chars), {what}")
                run = await peers[name].measure(text, config.voice)
                runs[name].setdefault(label if timed else f"warm-up/{label}", []).append(run)
    return runs


async def bench_peers(
    config: PeersConfig, progress: Progress, argv: Sequence[str] | None = None
) -> dict[str, Any]:
    """Start both peers, measure them side by side (see the module docstring), stop them.

    Args:
        config: What to run.
        progress: Called with a line per step.
        argv: The command's arguments after ``strands-voice`` (recorded as ``command``).

    Returns:
        A JSON-ready mapping: ``peers`` (one entry per peer), ``machine``, ``command``, ``config``.

    Raises:
        StrandsVoiceError: a peer did not start or a request failed.
    """
    started = time.perf_counter()
    results = _results_header(config, argv)
    if results["machine"]["torch_installed"]:
        progress(
            "torch is installed here: spaCy loads it into the endpoint (about +560 MB); the CPU install's "
            "memory is measured without the torch group (docs/benchmarks.md)"
        )
    environ = _isa_environ(config, results, progress)
    known: dict[str, Callable[[], Peer]] = {
        "strands-voice": lambda: EndpointPeer(environ=environ),
        "kokoro-onnx": lambda: KokoroOnnxPeer(environ=environ),
        TUNED: lambda: KokoroOnnxPeer(name=TUNED, endpoint_graph=True, environ=environ),
    }
    peers = {name: known[name]() for name in config.peers}
    ready_mb: dict[str, float | None] = {}
    try:
        for peer in peers.values():
            progress(f"starting {peer.name} (loading the model)")
            await peer.start()
            ready_mb[peer.name] = peak_rss_mb(peer.pid)
            progress(f"{peer.name} ready in {peer.load_s} s, {ready_mb[peer.name]} MB")
        runs = await _alternate(peers, config, progress)
        results["peers"] = [
            {
                **summarize_peer(name, config.texts, runs[name]),
                "load_s": peer.load_s,
                "ready_mb": ready_mb[name],
                "peak_mb": peak_rss_mb(peer.pid),
                "warm_up_first_audio_ms": {
                    label: round(runs[name][f"warm-up/{label}"][0].first_audio_s * 1e3, 1)
                    for label, _ in config.texts
                    if runs[name].get(f"warm-up/{label}")
                },
            }
            for name, peer in peers.items()
        ]
    finally:
        for peer in peers.values():
            await peer.stop()
    results["machine"]["load_average_end"] = load_average()
    results["machine"]["threads_env"] = os.environ.get("KOKORO_ONNX_THREADS")
    results["duration_s"] = round(time.perf_counter() - started, 1)
    return results


def _isa_environ(config: PeersConfig, results: dict[str, Any], progress: Progress) -> dict[str, str]:
    """The peers' added environment for ``config.isa``, and what their kernels are, probed in a process
    started the same way (``machine.kernels``: numpy's view of the CPU, whether u8 x s8 pair sums saturate,
    the endpoint's path).

    Raises:
        StrandsVoiceError: the instruction set cannot be emulated here, or the emulation did not take.
    """
    from strands_voice_tools.bench.isa import emulation_environ, probe_in_child

    environ = emulation_environ(config.isa) if config.isa else {}
    kernels = probe_in_child(environ)
    results["machine"]["kernels"] = kernels
    if config.isa and kernels.get("emulated_isa") != config.isa:
        raise StrandsVoiceError(f"the {config.isa} emulation did not take: {kernels}")
    progress(f"peers run on: {kernels['endpoint_cpu_path']}")
    return environ


def _results_header(config: PeersConfig, argv: Sequence[str] | None) -> dict[str, Any]:
    """What a run records before it measures: the schema, the command, the config and the machine."""
    return {
        "schema": "strands-voice-bench-peers/1",
        "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": shlex.join(["strands-voice", *(sys.argv[1:] if argv is None else argv)]),
        "config": {
            "trials": config.trials,
            "warmups": config.warmups,
            "voice": config.voice,
            "peers": list(config.peers),
            "isa": config.isa,
        },
        "machine": {
            **describe_machine(),
            "kokoro_onnx": package_version("kokoro-onnx"),
            # spaCy (the endpoint's English G2P) imports torch at import time when it is installed.
            "torch_installed": importlib.util.find_spec("torch") is not None,
        },
    }
