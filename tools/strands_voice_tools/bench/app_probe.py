"""Time one voice answer through the AgentCore app over Leg 3 (SSE), as a caller sees it.

The bytes go to the one Leg 3 client, :class:`~strands_voice_protocol.leg3_client.Leg3Recorder`: every event
is stamped with its arrival on the client's clock, next to the server's own ``t_ms``, so the benchmark can
put text arrival and audio arrival on one timeline.
"""

from __future__ import annotations

import asyncio
import logging
import time

import httpx
from strands_voice_protocol.errors import StrandsVoiceError
from strands_voice_protocol.leg3_client import Leg3Recorder, ModeResult

from strands_voice_tools.audio_analysis import first_heard_s

__all__ = ["run_voice_request"]

logger = logging.getLogger(__name__)


async def run_voice_request(
    client: httpx.AsyncClient,
    app_url: str,
    prompt: str,
    *,
    mode: str,
    audio_format: str = "pcm16",
    timeout_s: float = 600.0,
) -> ModeResult:
    """POST one prompt to the app's ``/invocations`` and read its Leg 3 stream to the end.

    Args:
        client: The HTTP client (kept open across runs, like a browser keeps its connection).
        app_url: The app's base URL, ``http://host:port``.
        prompt: The prompt.
        mode: ``bidi`` or ``batch``.
        audio_format: ``pcm16``, ``mp3`` or ``opus`` (the ``format`` field).
        timeout_s: The longest the whole answer may take.

    Returns:
        The run, with arrival times (and ``first_heard_s`` for pcm16).

    Raises:
        StrandsVoiceError: the app refused the request, or the stream did not finish in time.
    """
    recorder = Leg3Recorder(mode, audio_format)
    body = {"prompt": prompt, "mode": mode, "format": audio_format}
    started = recorder.result.started_at = time.perf_counter()
    try:
        async with asyncio.timeout(timeout_s):
            async with client.stream(
                "POST", f"{app_url}/invocations", json=body, headers={"Accept": "text/event-stream"}
            ) as response:
                if response.status_code != 200:
                    await response.aread()
                    raise StrandsVoiceError(
                        f"the app answered HTTP {response.status_code}: {response.text[:200]}"
                    )
                async for raw in response.aiter_raw():
                    recorder.feed(raw, time.perf_counter() - started)
    except TimeoutError:
        raise StrandsVoiceError(f"the {mode} answer did not finish within {timeout_s} s") from None
    except httpx.HTTPError as error:
        raise StrandsVoiceError(f"the app could not be reached at {app_url}") from error
    run = recorder.close(time.perf_counter() - started)
    run.first_heard_s = first_heard_s(run)
    logger.debug(
        "mode=<%s>, format=<%s>, ttfa_s=<%s>, chunks=<%d> | voice run done",
        mode,
        audio_format,
        run.first_audio_s,
        len(run.audio),
    )
    return run
