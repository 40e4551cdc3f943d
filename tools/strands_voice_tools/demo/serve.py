"""``strands-voice demo --serve``: the stack and its browser page, until Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from strands_voice_tools.demo.progress import Progress
from strands_voice_tools.demo.stack import start_demo_stack

__all__ = ["serve"]


def serve(args: argparse.Namespace, spec: str, progress: Progress) -> int:
    """Start the stack on ``args.host``, ``args.port``, ``args.tts_port``; print the page; serve until Ctrl-C.

    Returns:
        The exit status (0).
    """
    stack = start_demo_stack(spec, args.host, args.port, args.tts_port, progress=progress)
    try:
        print(f"TTS endpoint: {stack.endpoint_url} (voice {stack.voice})")
        print(f"open {stack.app_url}/ in a browser; press Ctrl-C to stop", flush=True)
        threading.Event().wait()
    except KeyboardInterrupt:
        print("stopping", file=sys.stderr)
    finally:
        # A terminal's Ctrl-C also reaches `uv run`, which forwards it: a second SIGINT must not cut the
        # shutdown short.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            stack.stop()
        finally:
            signal.signal(signal.SIGINT, previous)
    return 0
