"""The ``bench`` command's options (:func:`add_arguments`); what each runs is in the package's docstring."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_arguments"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``bench`` options to ``parser``."""
    parser.add_argument(
        "--quick",
        action="store_true",
        help="the short smoke form (2 trials, 1-2 sessions, a 2-sentence answer); figures are not comparable",
    )
    parser.add_argument(
        "--json", metavar="FILE", type=Path, help="write every figure and the machine as JSON"
    )
    parser.add_argument(
        "--plot",
        metavar="FILE",
        type=Path,
        help="write a PNG: bidi/batch timelines and TTFA bars (matplotlib)",
    )
    parser.add_argument(
        "--trials", type=int, default=None, help="timed trials per figure (default 5; 2 with --quick)"
    )
    _add_parts(parser)
    _add_talk_arguments(parser)
    _add_capacity_arguments(parser)


def _add_parts(parser: argparse.ArgumentParser) -> None:
    """The options that pick one part of the bench: ``--heard``, ``--schedule``, ``--peers``."""
    parser.add_argument(
        "--heard",
        action="store_true",
        help="only time to first heard sound, before/after each step (raw, silence policy, two window plans)",
    )
    parser.add_argument(
        "--schedule",
        action="store_true",
        help="only the endpoint's scheduling: fifo vs deadline, 1/2/4/8 staggered sessions and 16 x 4 load",
    )
    parser.add_argument(
        "--sessions",
        metavar="N,N,...",
        type=_session_counts,
        default=None,
        help="with --schedule: the staggered session counts (default 1,2,4,8)",
    )
    parser.add_argument(
        "--peers",
        action="store_true",
        help="only strands-voice beside kokoro-onnx (same model and voice); with --talk: spoken calls to "
        "strands-voice beside a Pipecat pipeline (needs `uv sync --group peers --group listen`)",
    )
    parser.add_argument(
        "--peers-tuned",
        action="store_true",
        help="with --peers: also kokoro-onnx on the endpoint's graph and session options",
    )
    parser.add_argument(
        "--isa",
        choices=("avx2", "avx512"),
        default=None,
        help="with --peers: run both peers on that older instruction set's kernels, emulated here "
        "(Linux x86-64 with CPUID faulting and a C compiler)",
    )


def _add_capacity_arguments(parser: argparse.ArgumentParser) -> None:
    """``--calls`` (with ``--talk``) and ``--soak``: how many calls a machine holds, and what they leave."""
    parser.add_argument(
        "--calls",
        metavar="N,N,...",
        type=_session_counts,
        default=None,
        help="with --talk: N spoken calls at once to one app and endpoint, per N (e.g. 1,2,4): "
        "voice-to-voice, end of turn and barge-in p50/p95, and the calls this machine holds (listen group)",
    )
    parser.add_argument(
        "--soak",
        metavar="CALLS",
        type=int,
        default=None,
        help="only the soak: CALLS calls one after another, then CALLS 4 at a time, each two turns and a "
        "hang-up, against the app in its own process; its memory, open files, sockets, threads, temp files",
    )


def _add_talk_arguments(parser: argparse.ArgumentParser) -> None:
    """``--talk`` and what goes with it: ``--speculation``, ``--lang``."""
    parser.add_argument(
        "--talk",
        action="store_true",
        help="only VoiceCascade: voice-to-voice latency (split) and barge-in reaction, spoken trials",
    )
    parser.add_argument("--speculation", action="store_true", help="with --talk: only speculation on/off")
    parser.add_argument(
        "--lang",
        choices=("a", "j"),
        default="a",
        help="with --talk: also the turn-taking calls with callers of this language (j: the endpoint's "
        "Japanese voices in Japanese), their figures beside the English ones",
    )


def _session_counts(value: str) -> tuple[int, ...]:
    """``--sessions``: comma-separated positive session counts."""
    try:
        counts = tuple(int(part) for part in value.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of session counts: {value!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError("session counts must be at least 1")
    return counts
