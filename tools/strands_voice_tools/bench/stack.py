"""Start what the benchmark measures: the real TTS endpoint (ONNX engine) and the real example app.

Both run in this process on loopback (``strands_voice_tools.demo.start_demo_stack``), each under uvicorn on
its
own thread, sharing ONE engine instance that the benchmark loads itself, so the engine's in-process time
can be measured on exactly what the endpoint serves from: alone (idle) and, through a
:class:`~strands_voice_tools.bench.engine_probe.RecordingEngine` wrapper, as it ran during each trial.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strands_voice_tools.bench.engine_probe import RecordingEngine

if TYPE_CHECKING:
    from strands_voice_tools.demo import DemoStack

__all__ = ["BenchStack", "start_bench_stack"]

logger = logging.getLogger(__name__)


@dataclass
class BenchStack:
    """The running endpoint and app.

    Attributes:
        engine: The warmed-up TTS engine the endpoint serves from.
        demo: The endpoint (Leg 1) and the AgentCore example app (Leg 3) that talks to it (Leg 2).
        timed: The same engine as the endpoint sees it: records each request's first segment.
    """

    engine: Any
    demo: DemoStack
    timed: RecordingEngine

    @property
    def ws_url(self) -> str:
        """The endpoint's bidirectional route."""
        return self.demo.tts_url

    @property
    def app_url(self) -> str:
        """The app's base URL."""
        return self.demo.app_url

    def stop(self) -> None:
        """Stop the app, then the endpoint."""
        self.demo.stop()


def start_bench_stack(*, answer_text: str | None = None, host: str = "127.0.0.1") -> BenchStack:
    """Load and warm the ONNX engine, then serve the endpoint and the example app on free ports.

    Args:
        answer_text: The scripted model's answer; its built-in answer when None.
        host: The loopback interface to bind.

    Returns:
        The running stack; call :meth:`BenchStack.stop` when done.

    Raises:
        DemoError: the endpoint or the example app package is missing, or a server did not start.
    """
    from agentcore_app.scripted import ScriptedModel

    from strands_voice_tools.demo import load_tts_engine, start_demo_stack

    engine = load_tts_engine()
    timed = RecordingEngine(engine)
    # The workload of the issue: first sentence complete at 0.6 s, whole answer at 5.0 s.
    model = ScriptedModel(text=answer_text, first_sentence_s=0.6, total_s=5.0)
    demo = start_demo_stack("scripted", host, engine=timed, model=model)
    logger.debug("endpoint=<%s>, app=<%s> | bench stack started", demo.endpoint_url, demo.app_url)
    return BenchStack(engine=engine, demo=demo, timed=timed)
