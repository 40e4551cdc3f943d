"""``strands-voice phone-bridge --runtime-arn ARN``: Twilio Media Streams to a deployed runtime, signed.

Twilio opens a plain WebSocket to the ``<Stream url>`` of its TwiML: it cannot sign a request with SigV4 and
drops query parameters, so it cannot reach AgentCore's ``/ws`` itself. The bridge accepts Twilio's socket on
any path, reads Twilio's first frames up to ``start`` (``connected``, then ``start``), opens the runtime's
``/ws`` signed in its headers, sends those frames on, and from then on relays frame by frame both ways
(:func:`~strands_voice_tools.runtime.relay.relay`: each direction a tracked task; a close on either side
closes the other with its code and reason). The app tells a Twilio stream by its first frame.

The runtime session is ``start.customParameters.session_id`` when the TwiML names one (a shorter name than
AgentCore's 33 characters becomes ``phone-<name>-<its hash>``, always the same for the same name; the app
names the conversation by the parameter itself), else ``twilio-<CallSid>``: one session per call. The bridge
keeps nothing beyond the call, so any number of copies can run behind a load balancer. ``GET /ping`` answers
200 (its health check).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import logging
import signal
import sys
from collections.abc import AsyncIterator
from http import HTTPStatus
from typing import Any, Final

from strands_voice_protocol.errors import StrandsVoiceError

from strands_voice_tools.runtime.connect import open_runtime_socket
from strands_voice_tools.runtime.options import add_runtime_options, target_from_args
from strands_voice_tools.runtime.relay import relay
from strands_voice_tools.runtime.signing import RuntimeTarget, Signer

__all__ = ["PhoneBridge", "add_arguments", "run", "session_for"]

logger = logging.getLogger(__name__)

#: Twilio sends ``connected`` then ``start``: a stream that has not started after this many frames or
#: seconds is not a Twilio stream.
_MAX_BEFORE_START: Final = 4
_START_WITHIN_S: Final = 10.0
_GRACE_S: Final = 5.0
#: AgentCore's shortest runtime session id.
_MIN_SESSION: Final = 33


def session_for(start: dict[str, Any]) -> str:
    """The runtime session of a call, from Twilio's ``start`` event (module docstring)."""
    details = start.get("start") or {}
    named = (details.get("customParameters") or {}).get("session_id")
    if isinstance(named, str) and named:
        if len(named) >= _MIN_SESSION:
            return named
        # The app takes shorter ids (the stream's parameter names its conversation); AgentCore does not:
        # the same name always maps to the same runtime session.
        return f"phone-{named}-{hashlib.sha256(named.encode()).hexdigest()[:26]}"
    return f"twilio-{details.get('callSid') or start.get('streamSid') or 'unknown-call'}"


async def _until_start(twilio: Any) -> tuple[list[str | bytes], dict[str, Any]]:
    """Twilio's frames up to and including ``start``, and the ``start`` event.

    Raises:
        ValueError: no ``start`` among the first frames, or a frame that is not Twilio's JSON.
    """
    frames: list[str | bytes] = []
    while len(frames) < _MAX_BEFORE_START:
        frame = await asyncio.wait_for(twilio.recv(), _START_WITHIN_S)
        frames.append(frame)
        event = json.loads(frame) if isinstance(frame, str) else None
        if not isinstance(event, dict) or "event" not in event:
            raise ValueError("not a Twilio Media Streams frame")
        if event["event"] == "start":
            return frames, event
    raise ValueError("no start event")


class PhoneBridge:
    """Relays each Twilio call to the runtime (module docstring).

    Args:
        target: The runtime.
        signer: Signs each call's connection.
    """

    def __init__(self, target: RuntimeTarget, signer: Signer) -> None:
        self.target = target
        self.signer = signer
        self.calls = 0

    async def handle(self, twilio: Any) -> None:
        """One call: Twilio's socket to a fresh signed runtime socket, until either side closes."""
        try:
            frames, start = await _until_start(twilio)
        except (ValueError, TimeoutError) as why:
            await twilio.close(1008, str(why))
            return
        session = session_for(start)
        try:
            runtime = await open_runtime_socket(self.target, self.signer, session)
        except StrandsVoiceError as error:
            logger.warning("session_id=<%s>, error=<%s> | runtime connection failed", session, error)
            await twilio.close(1011, "the agent cannot be reached")
            return
        self.calls += 1
        logger.debug("session_id=<%s> | call relayed", session)
        try:
            for frame in frames:
                await runtime.send(frame)
            await relay(twilio, runtime, grace_s=_GRACE_S, names=("twilio", "runtime"))
        finally:
            with contextlib.suppress(Exception):  # already closed by the relay: the usual case
                await asyncio.wait_for(runtime.close(), _GRACE_S)

    @staticmethod
    def _health(connection: Any, request: Any) -> Any:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return None
        if request.path.split("?")[0] == "/ping":
            return connection.respond(HTTPStatus.OK, "ok\n")
        return connection.respond(HTTPStatus.UPGRADE_REQUIRED, "a Twilio Media Streams WebSocket\n")

    @contextlib.asynccontextmanager
    async def serving(self, host: str, port: int) -> AsyncIterator[int]:
        """Serve on ``host:port`` (0: a free port); yields the port."""
        from websockets.asyncio.server import serve

        async with serve(self.handle, host, port, process_request=self._health, max_size=None) as server:
            yield next(iter(server.sockets)).getsockname()[1]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``phone-bridge`` options to ``parser``."""
    add_runtime_options(parser, arn_help="the runtime to carry calls to", required=True)
    parser.add_argument("--host", default="127.0.0.1", help="interface to serve on (0.0.0.0 in a container)")
    parser.add_argument("--port", type=int, default=8080, help="the port to serve on (default 8080)")


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM; returns 0.

    Raises:
        StrandsVoiceError: a bad ARN or endpoint, no credentials, or the port is taken.
    """
    bridge = PhoneBridge(target_from_args(args), Signer())
    try:
        asyncio.run(_serve(bridge, args.host, args.port))
    except OSError as error:
        raise StrandsVoiceError(f"cannot serve on {args.host}:{args.port}: {error}") from None
    return 0


async def _serve(bridge: PhoneBridge, host: str, port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    async with bridge.serving(host, port) as bound:
        print(f"phone bridge on ws://{host}:{bound}/ -> {bridge.target.arn}", file=sys.stderr, flush=True)
        await stop.wait()
