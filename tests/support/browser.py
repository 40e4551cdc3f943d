"""Browser test support: Chromium discovery, a page wrapper, and a replay app that streams Leg 3 SSE.

The replay app is a tiny inline Starlette app that serves the real page (``agentcore_app/static``) and
answers ``POST /invocations`` with a realistic Leg 3 stream: word-by-word text, and per sentence real
pcm16 audio (a speech-like harmonic signal) or that audio encoded as opus/mp3/wav by
``strands_voice_protocol.audio``. It records every payload it receives and whether the caller hung up, so
the page's
requests and its Stop button can be checked. The end-to-end test against the real endpoint and app is in
``test_browser_real_stack.py``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

REPO_ROOT = Path(__file__).resolve().parents[2]
STATIC_DIR = REPO_ROOT / "examples" / "agentcore_app" / "agentcore_app" / "static"
ARTIFACTS_DIR = REPO_ROOT / "artifacts" / "browser"
SAMPLE_RATE = 24000

#: Debian's Chromium, headless in a container: no sandbox, no GPU, no background traffic; Web Audio may
#: start without a gesture (the Speak click is one anyway).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
]

#: Replayed speech length: shorter than real speech so tests that wait for playback to end stay quick.
SECONDS_PER_CHAR = 0.03

#: What the replay app says, one list of words per sentence.
REPLAY_SENTENCES = [
    "Voice agents feel fast when speech starts early.",
    "Each finished sentence goes to the speech engine at once.",
    "Its audio streams back while the next sentence is still being written.",
]


def find_chromium() -> str | None:
    """The Chromium binary: ``$CHROMIUM`` if set, else ``chromium`` on PATH, else Debian's path."""
    for candidate in (os.environ.get("CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


@dataclass
class PageSession:
    """A page plus everything it logged."""

    page: Any
    console: list[tuple[str, str]] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    @property
    def console_errors(self) -> list[str]:
        return [text for kind, text in self.console if kind == "error"] + self.page_errors

    def stats(self) -> dict[str, Any]:
        """A copy of ``window.voiceStats``."""
        result: dict[str, Any] = self.page.evaluate("() => JSON.parse(JSON.stringify(window.voiceStats))")
        return result

    def wait_for_state(self, *states: str, timeout_s: float = 30.0) -> dict[str, Any]:
        """Waits until the page's state is one of ``states``; returns the stats."""
        self.page.wait_for_function(
            "states => states.includes(window.voiceStats && window.voiceStats.state)",
            arg=list(states),
            timeout=timeout_s * 1000,
        )
        return self.stats()

    def screenshot(self, name: str) -> Path:
        """Saves a full-page screenshot under ``artifacts/browser/``."""
        ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS_DIR / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


@contextmanager
def microphone_chromium(chromium_path: str, wav: Path) -> Iterator[Any]:
    """A headless Chromium whose microphone plays ``wav`` (looped), the permission granted."""
    from optional_groups import require

    sync_playwright = require("playwright.sync_api", "browser").sync_playwright
    fake = [
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={wav}",
    ]
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS + fake)
        try:
            yield instance
        finally:
            instance.close()


@contextmanager
def microphone_page(browser: Any, url: str) -> Iterator[PageSession]:
    """The page at ``url`` in a fresh context of ``browser`` (:func:`microphone_chromium`) with the
    microphone permitted, its console recorded; the context is closed after."""
    context = browser.new_context(permissions=["microphone"])
    session = PageSession(page=context.new_page())
    session.page.on("console", lambda message: session.console.append((message.type, message.text)))
    try:
        open_page(session, url)
        yield session
    finally:
        context.close()


def open_page(session: PageSession, url: str) -> None:
    """Loads the page and waits until its script has wired everything."""
    session.page.goto(url)
    session.page.wait_for_selector("html[data-ready='true']", state="attached", timeout=60_000)


# ---------------------------------------------------------------------------------------------------------
# The replay app
# ---------------------------------------------------------------------------------------------------------


def speechlike_pcm16(seconds: float, seed: int = 0) -> bytes:
    """Speech-like pcm16: a gliding harmonic voice with syllable-rate loudness changes."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    f0 = 125.0 + 30.0 * np.sin(2 * np.pi * 0.8 * t + seed)
    phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
    voice = sum((0.7 / k) * np.sin(k * phase) for k in range(1, 9))
    syllables = 0.5 * (1 - np.cos(2 * np.pi * 4.0 * t + seed))
    fade = np.minimum(1.0, np.minimum(t, t[-1] - t) / 0.01)  # no click at either end
    signal = 0.25 * voice * syllables * fade
    return bytes((np.clip(signal, -1, 1) * 32767).astype("<i2").tobytes())


class _PassThrough:
    """pcm16 as is (the replay app's own; the library's encoders handle the other formats)."""

    def encode(self, pcm: bytes) -> bytes:
        return pcm

    def flush(self) -> bytes:
        return b""


def replay_words(sentence: str) -> list[dict[str, Any]]:
    """A ``words`` event's list for a replayed sentence: each word where its characters are in the audio."""
    return [
        {
            "word": m.group(0),
            "start_s": round(SECONDS_PER_CHAR * m.start(), 3),
            "end_s": round(SECONDS_PER_CHAR * m.end(), 3),
            "char_start": m.start(),
            "char_end": m.end(),
        }
        for m in re.finditer(r"\S+", sentence)
    ]


def _encoder(audio_format: str) -> Any:
    if audio_format == "pcm16":
        return _PassThrough()
    from strands_voice_protocol.audio import create_encoder

    return create_encoder(audio_format, SAMPLE_RATE)


@dataclass
class ReplayRecord:
    """What the replay app saw."""

    payloads: list[Any] = field(default_factory=list)
    disconnected: int = 0
    completed: int = 0
    audio_seconds: list[float] = field(default_factory=list)
    interrupt_actions: list[Any] = field(default_factory=list)  # {"action": "interrupt"} bodies (Stop)


def create_replay_app(record: ReplayRecord, *, word_delay_s: float = 0.03, chunk_s: float = 0.2) -> Starlette:
    """The page's static files plus ``POST /invocations`` replaying a Leg 3 stream.

    The answer depends on the payload: ``voice`` containing a space is refused with 400 (like the real
    app); ``timestamps`` adds a ``words`` event before each sentence's audio; a prompt containing
    ``speech-fails`` gets an ``error`` event after the first sentence while the text keeps flowing;
    ``slow`` paces the audio in real time (for Stop); ``mode`` and ``format`` are honoured.
    """

    async def invocations(request: Request) -> Response:
        payload = await request.json()
        if payload.get("action") == "interrupt":  # the Stop button's barge-in, as the real app answers it
            record.interrupt_actions.append(payload)
            return JSONResponse({"type": "interrupt_result", "interrupted": True})
        record.payloads.append(payload)
        if " " in str(payload.get("voice", "")):
            message = "'voice' must be a voice id"
            return JSONResponse(
                {"type": "error", "t_ms": 0, "code": "invalid_request", "message": message}, 400
            )
        prompt = str(payload.get("prompt", ""))
        stream = replay_events(
            mode=str(payload.get("mode", "bidi")),
            audio_format=str(payload.get("format", "pcm16")),
            speech_fails="speech-fails" in prompt,
            real_time="slow" in prompt,
            timestamps=payload.get("timestamps") is True,
        )
        return StreamingResponse(stream, media_type="text/event-stream")

    async def replay_events(
        *, mode: str, audio_format: str, speech_fails: bool, real_time: bool, timestamps: bool
    ) -> AsyncIterator[bytes]:
        started = time.monotonic()
        encoder = _encoder(audio_format)
        seq = {"text": 0, "audio": 0}
        spoken = 0.0

        def event(kind: str, **fields: Any) -> bytes:
            body = {"type": kind, "t_ms": round((time.monotonic() - started) * 1000, 1), **fields}
            return f"data: {json.dumps(body)}\n\n".encode()

        async def speak(index: int, sentence: str, last: bool) -> AsyncIterator[bytes]:
            nonlocal spoken
            seconds = SECONDS_PER_CHAR * len(sentence)
            pcm = speechlike_pcm16(seconds, seed=index)
            step = int(chunk_s * SAMPLE_RATE) * 2
            pieces = [pcm[i : i + step] for i in range(0, len(pcm), step)]
            if timestamps:  # the replayed audio is SECONDS_PER_CHAR a character: each word at its chars
                yield event("words", sentence=index, words=replay_words(sentence))
            for n, piece in enumerate(pieces):
                data = encoder.encode(piece)
                if last and n == len(pieces) - 1:
                    data += encoder.flush()
                if data:
                    encoded = base64.b64encode(data).decode()
                    yield event("audio_chunk", seq=seq["audio"], sentence=index, data=encoded)
                    seq["audio"] += 1
                await asyncio.sleep(chunk_s * 0.9 if real_time else 0.01)
            spoken += seconds
            yield event("sentence_complete", sentence=index, text=sentence, duration_s=round(seconds, 3))

        try:
            yield event("agent_start", mode=mode, request_id="replay-1")
            yield event("audio_start", format=audio_format, sample_rate=SAMPLE_RATE, channels=1)
            text_done: list[int] = []
            for index, sentence in enumerate(REPLAY_SENTENCES):
                words = re.findall(r"\S+\s*", sentence + " ")
                for word in words:
                    await asyncio.sleep(word_delay_s)
                    yield event("text_delta", seq=seq["text"], text=word)
                    seq["text"] += 1
                text_done.append(index)
                if mode == "bidi" and not (speech_fails and index > 0):
                    async for chunk in speak(index, sentence, last=index == len(REPLAY_SENTENCES) - 1):
                        yield chunk
                if speech_fails and index == 0:
                    message = "Speech stopped: the TTS endpoint is unreachable"
                    yield event("error", code="tts_unavailable", message=message)
            if mode == "batch" and not speech_fails:
                for index, sentence in enumerate(REPLAY_SENTENCES):
                    async for chunk in speak(index, sentence, last=index == len(REPLAY_SENTENCES) - 1):
                        yield chunk
            yield event("audio_end", chunks=seq["audio"], duration_s=round(spoken, 3))
            yield event("agent_end", ttfa_ms=123.0, text_ms=456.0, audio_ms=789.0)
            record.completed += 1
            record.audio_seconds.append(spoken)
        except (asyncio.CancelledError, GeneratorExit):
            record.disconnected += 1
            raise

    return Starlette(routes=[*page_routes(), Route("/invocations", invocations, methods=["POST"])])


def page_routes() -> list[BaseRoute]:
    """The page's own routes: ``/`` (index.html) and its ``/static`` files, for a test's app beside them."""

    async def index(_request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html; charset=utf-8")

    return [Route("/", index), Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static")]


@dataclass
class ReplayServer:
    url: str
    record: ReplayRecord
    server: Any
