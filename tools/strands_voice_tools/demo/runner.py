"""Ask the agent once per mode over real HTTP, read the answer with the one Leg 3 client, write the WAVs."""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from strands_voice_protocol.leg3_client import Leg3Recorder, ModeResult, record_stream

from strands_voice_tools.demo.errors import DemoError
from strands_voice_tools.demo.progress import Progress, ProgressStep
from strands_voice_tools.demo.report import DemoReport
from strands_voice_tools.demo.stack import start_demo_stack

if TYPE_CHECKING:
    import httpx
    from kokoro_endpoint.engines.interface import Engine

__all__ = ["DEFAULT_FOLLOW_UP", "DEFAULT_OUT_DIR", "DEFAULT_PROMPT", "SESSION_HEADER", "run_demo", "run_mode"]

#: Asks what the built-in scripted answer happens to be about, so prompt and answer match.
DEFAULT_PROMPT: Final = "What does the Premium plan include, and how much does it cost?"
#: The follow-up turn's question (``--follow-up`` without a value): it only makes sense with memory.
DEFAULT_FOLLOW_UP: Final = "And how do I cancel it?"
#: The AgentCore session header: invocations that carry the same id are one conversation.
SESSION_HEADER: Final = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id"
DEFAULT_OUT_DIR: Final = Path("out") / "demo"
_READ_TIMEOUT_S: Final = 300.0


def run_mode(
    app_url: str,
    prompt: str,
    mode: str,
    *,
    voice: str | None = None,
    audio_format: str = "pcm16",
    read_timeout: float = _READ_TIMEOUT_S,
    on_update: Callable[[ModeResult], None] | None = None,
    session_id: str | None = None,
) -> ModeResult:
    """Send one prompt to the app's ``/invocations`` and record its SSE stream as it arrives.

    Args:
        app_url: The app's base URL.
        prompt: The prompt.
        mode: ``bidi`` or ``batch``.
        voice: The TTS voice; the endpoint's default when None.
        audio_format: The audio format to ask for.
        read_timeout: Longest silence on the stream, in seconds.
        on_update: Called with the partial result after each chunk of the body (for progress).
        session_id: The conversation it belongs to (the AgentCore session header); None: a one-off.

    Returns:
        The events, timed at the client from sending the request (``first_heard_s`` set for pcm16).

    Raises:
        DemoError: The app refused the request or the connection failed.
    """
    import httpx

    from strands_voice_tools.audio_analysis import first_heard_s

    payload: dict[str, Any] = {"prompt": prompt, "mode": mode, "format": audio_format}
    if voice is not None:
        payload["voice"] = voice
    recorder = Leg3Recorder(mode, audio_format)
    timeout = httpx.Timeout(10.0, read=read_timeout)
    started = time.perf_counter()
    try:
        with (
            httpx.Client(timeout=timeout) as client,
            client.stream(
                "POST",
                f"{app_url}/invocations",
                json=payload,
                headers={} if session_id is None else {SESSION_HEADER: session_id},
            ) as response,
        ):
            if response.status_code != 200:
                raise _refusal(mode, response)
            result = record_stream(response.iter_bytes(), recorder, started=started, on_update=on_update)
    except httpx.TimeoutException as exc:
        raise DemoError(f"{mode}: the app went silent for {read_timeout:.0f} s") from exc
    except httpx.HTTPError as exc:
        raise DemoError(f"{mode}: the request to the app failed: {exc}") from exc
    result.first_heard_s = first_heard_s(result)
    return result


def _refusal(mode: str, response: httpx.Response) -> DemoError:
    """The error for an app that answered other than 200: its ``message`` when the body has one."""
    response.read()
    try:
        message = str(response.json().get("message", response.text))
    except (ValueError, AttributeError):
        message = response.text[:200]
    return DemoError(f"{mode}: the app answered HTTP {response.status_code}: {message}")


def run_demo(
    prompt: str = DEFAULT_PROMPT,
    modes: tuple[str, ...] = ("bidi", "batch"),
    *,
    model_spec: str | None = None,
    voice: str | None = None,
    audio_format: str = "pcm16",
    out_dir: Path | None = DEFAULT_OUT_DIR,
    engine: Engine | None = None,
    progress: Progress | None = None,
    follow_up: str | None = None,
) -> DemoReport:
    """Start the stack, run each mode once, write the WAVs, stop the stack.

    With ``follow_up``, the first mode's question opens a conversation (an AgentCore session id) and
    ``follow_up`` is asked next in it (``bidi``): its answer shows what the agent remembers. The other
    modes stay one-off, so every mode answers the same question with the same history.

    Args:
        prompt: The prompt to send.
        modes: The modes to run, in order.
        model_spec: The LLM; see :func:`start_demo_stack`.
        voice: The TTS voice; the endpoint's default when None.
        audio_format: The audio format the app streams (decoded back to PCM for the WAVs).
        out_dir: Where to write ``<mode>.wav``; no files when None.
        engine: An already loaded TTS engine (tests share one).
        progress: Where to show progress.
        follow_up: A second question in the first mode's conversation (None: none).

    Returns:
        The report.

    Raises:
        DemoError: Something failed; the message says what to do.
    """
    steps = progress or Progress(animate=False)
    stack = start_demo_stack(model_spec, engine=engine, progress=steps)
    report = DemoReport(prompt=prompt, model=stack.model, voice=voice or stack.voice, results=[])
    session_id = uuid.uuid4().hex + "-demo" if follow_up is not None else None
    ask = functools.partial(run_mode, stack.app_url, voice=voice, audio_format=audio_format)
    try:
        for index, mode in enumerate(modes):
            with steps.step(f"{mode}: asking the agent and speaking its answer") as status:
                first = session_id if index == 0 else None
                result = ask(prompt, mode, on_update=_shown_on(status), session_id=first)
            _keep(report, result, audio_format, out_dir)
        if follow_up is not None:
            with steps.step("follow-up: asking again in the same conversation"):
                report.follow_up_prompt = follow_up
                report.follow_up = ask(follow_up, "bidi", session_id=session_id)
    finally:
        stack.stop()
    return report


def _shown_on(status: ProgressStep) -> Callable[[ModeResult], None]:
    """Show a partial result's counts on a progress step."""

    def show(partial: ModeResult) -> None:
        status.detail = f"{len(partial.events)} events, {len(partial.audio)} audio chunks"

    return show


def _keep(report: DemoReport, result: ModeResult, audio_format: str, out_dir: Path | None) -> None:
    """Add one mode's result to ``report``: its audio decoded back to PCM, and its WAV when asked."""
    from strands_voice_protocol.audio import decode_audio, write_wav

    mode, encoded = result.mode, result.encoded_audio
    pcm = encoded if audio_format == "pcm16" or not encoded else decode_audio(encoded, audio_format)
    report.results.append(result)
    report.pcm[mode] = pcm
    if out_dir is not None and pcm:
        out_dir.mkdir(parents=True, exist_ok=True)
        report.wavs[mode] = out_dir / f"{mode}.wav"
        write_wav(report.wavs[mode], pcm)
