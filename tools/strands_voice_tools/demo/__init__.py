"""``strands-voice demo``: hear an agent speak while it still writes, and measure it.

The demo starts the Kokoro TTS endpoint (ONNX engine, CPU) and the example AgentCore app in-process on
loopback ports (:mod:`.stack`), sends one prompt through the app over real HTTP in ``bidi`` and then
``batch`` mode and reads the Server-Sent Events with the one Leg 3 client
(:class:`~strands_voice_protocol.leg3_client.Leg3Recorder`; :mod:`.runner`), writes one WAV per mode and
prints, per mode, the time to first text, to first audio and to last audio, plus the batch/bidi ratio of
time to first audio (:mod:`.report`). With ``--serve`` it starts the same two servers, prints the address
of the browser page and serves until Ctrl-C (:mod:`.serve`). The options and the run are in :mod:`.cli`;
progress lines in :mod:`.progress`.

The demo needs the repository checkout (``uv run strands-voice demo``): the endpoint and the example app
are workspace packages, not dependencies of the library.
"""

from __future__ import annotations

from strands_voice_tools.demo.cli import add_arguments, run
from strands_voice_tools.demo.errors import DemoError
from strands_voice_tools.demo.progress import Progress, ProgressStep
from strands_voice_tools.demo.report import DemoReport, format_report, report_to_json
from strands_voice_tools.demo.runner import DEFAULT_PROMPT, run_demo, run_mode
from strands_voice_tools.demo.stack import DemoStack, load_tts_engine, start_demo_stack

__all__ = [
    "DEFAULT_PROMPT",
    "DemoError",
    "DemoReport",
    "DemoStack",
    "Progress",
    "ProgressStep",
    "add_arguments",
    "format_report",
    "load_tts_engine",
    "report_to_json",
    "run",
    "run_demo",
    "run_mode",
    "start_demo_stack",
]
