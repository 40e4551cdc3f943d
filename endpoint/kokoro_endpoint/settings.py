"""Server settings: engine choice and every limit the endpoint enforces."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.limits import IDLE_TIMEOUT_S, MAX_SPEED, MAX_TEXT_CHARS, MIN_SPEED

from kokoro_endpoint.engines.silence import SilencePolicy
from kokoro_endpoint.scheduling.admission import DEFAULT_MAX_LOAD
from kokoro_endpoint.scheduling.scheduler import SCHEDULING_POLICIES
from kokoro_endpoint.text.segmentation import DEFAULT_CLAUSE_CHARS

__all__ = ["Settings"]


@dataclass(frozen=True)
class Settings:
    """What the endpoint loads and the limits it enforces.

    The limits a client must know (text length, speed range, idle timeout) default to
    :mod:`strands_voice_protocol.limits`, which the library sizes its requests and keepalive from.

    Attributes:
        engine: ``auto``, ``onnx`` or ``torch`` (used when ``create_app`` is not given an engine).
        device: ``auto``, ``cuda`` or ``cpu`` (:mod:`kokoro_endpoint.engines.device`): ``cuda`` loads the
            torch engine onto the GPU and fails at start-up when none is visible.
        model_dir: Torch weights folder; None means ``$SM_MODEL_DIR`` or ``/opt/ml/model``.
        voices: The onnx engine's Kokoro voice files (a directory of ``NAME.bin``, or an ``.npz`` bundle such
            as kokoro-onnx's ``voices-v1.0.bin``); None means ``$KOKORO_VOICES`` (unset: the shipped voices).
        max_text_chars: Longest ``text`` of one request (longer: ``text_too_long``).
        max_frame_bytes: Largest client WebSocket frame or ``/invocations`` body accepted.
        max_sessions: Concurrent WebSocket sessions plus ``/invocations`` streams (more: ``busy``/503).
        max_pending_requests: Requests one session may have queued and unfinished (more: ``busy``).
        idle_timeout_s: A session with nothing to do and no frame for this long is closed.
        max_session_s: A WebSocket session older than this is closed (1001 "going away": a client with
            audio owed reconnects and resumes), however busy or kept alive it is.
        send_timeout_s: A WebSocket session or HTTP stream whose client takes no frame (no piece of the
            body) for this long is dropped: a client that stops reading behind a proxy frees its slot.
        min_speed: Slowest ``speed`` accepted.
        max_speed: Fastest ``speed`` accepted.
        pipeline_depth: Requests of one session in flight at once: one being sent plus the ones being
            synthesized ahead of it (2 = synthesize N+1 while N is sent).
        audio_frame_bytes: Largest audio frame sent (an even number: whole 16-bit samples).
        synthesis_workers: Model calls run at once (threads); 1 suits one CPU socket or one GPU.
        scheduling: Which queued synthesis step runs next (:mod:`kokoro_endpoint.scheduling.scheduler`):
            ``deadline`` (the listener who runs out of audio first; a new request at once) or ``fifo``
            (first submitted, first run).
        opening_lane: Under ``deadline``, a new request's first step runs at once on a lane of its own,
            pausing the running steps (they run again after it, with the same audio); False: it waits for
            the running step.
        admission_max_load: Admission control (:mod:`kokoro_endpoint.scheduling.admission`), off when None: a
            new listener (a WebSocket session, a session's new answer, an ``/invocations`` or
            ``/v1/audio/speech`` stream) is refused with ``busy`` before any audio when
            ``(listeners + 1) x load`` would exceed this share of the workers' time, ``load`` being the
            engine's compute seconds per second of audio (measured at start-up, then from every step),
            or when a listener being synthesized for has too little audio left to wait for it.
        close_timeout_s: How long session tasks get to finish when a session ends.
        clause_chars: Sentences longer than this are synthesized phrase by phrase, split at their clause
            punctuation, so their first audio comes sooner (seconds sooner on a CPU); None keeps every
            sentence whole.
        silence: How each segment's own silence is trimmed and which pauses are inserted
            (:class:`~kokoro_endpoint.engines.silence.SilencePolicy`); a WebSocket session may override the
            pauses with query parameters (``?sentence_pause_ms=400&clause_pause_ms=100&trim=0``).
        lexicon: The deployment's pronunciations (``KOKORO_LEXICON``, a JSON file: ``{"word": "phonemes"}``),
            under every request's own ``lexicon``.
    """

    engine: str = "auto"
    device: str = "auto"
    model_dir: Path | None = None
    voices: Path | None = None
    max_text_chars: int = MAX_TEXT_CHARS
    max_frame_bytes: int = 64 * 1024
    max_sessions: int = 16
    max_pending_requests: int = 64
    idle_timeout_s: float = IDLE_TIMEOUT_S
    max_session_s: float = 3600.0
    send_timeout_s: float = 60.0
    min_speed: float = MIN_SPEED
    max_speed: float = MAX_SPEED
    pipeline_depth: int = 2
    audio_frame_bytes: int = 24_000
    synthesis_workers: int = 1
    scheduling: str = "deadline"
    opening_lane: bool = True
    admission_max_load: float | None = DEFAULT_MAX_LOAD
    close_timeout_s: float = 5.0
    clause_chars: int | None = DEFAULT_CLAUSE_CHARS
    silence: SilencePolicy = field(default_factory=SilencePolicy)
    lexicon: Mapping[str, str] = field(default_factory=dict)

    @property
    def torch_device(self) -> str | None:
        """The torch engine's device for :attr:`device` (None: CUDA when available, else the CPU)."""
        return None if self.device == "auto" else self.device

    def __post_init__(self) -> None:
        positive = {
            "max_text_chars": self.max_text_chars,
            "max_frame_bytes": self.max_frame_bytes,
            "max_sessions": self.max_sessions,
            "max_pending_requests": self.max_pending_requests,
            "idle_timeout_s": self.idle_timeout_s,
            "max_session_s": self.max_session_s,
            "send_timeout_s": self.send_timeout_s,
            "pipeline_depth": self.pipeline_depth,
            "audio_frame_bytes": self.audio_frame_bytes,
            "synthesis_workers": self.synthesis_workers,
            "close_timeout_s": self.close_timeout_s,
        }
        for name, value in positive.items():
            if value <= 0:
                raise ConfigurationError(f"{name} must be positive")
        if self.clause_chars is not None and self.clause_chars <= 0:
            raise ConfigurationError("clause_chars must be positive or None")
        if self.audio_frame_bytes % 2:
            raise ConfigurationError("audio_frame_bytes must be even (whole 16-bit samples)")
        if self.scheduling not in SCHEDULING_POLICIES:
            raise ConfigurationError(f"scheduling must be one of {', '.join(SCHEDULING_POLICIES)}")
        if self.admission_max_load is not None and self.admission_max_load <= 0:
            raise ConfigurationError("admission_max_load must be positive or None")
        if self.device not in ("auto", "cuda", "cpu"):
            raise ConfigurationError("device must be auto, cuda or cpu")
        if not 0 < self.min_speed <= self.max_speed:
            raise ConfigurationError("need 0 < min_speed <= max_speed")
