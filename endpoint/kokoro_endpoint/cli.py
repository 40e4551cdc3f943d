"""``kokoro-endpoint``: run the TTS server (the container's ``serve`` calls this)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path

from strands_voice_protocol.errors import ConfigurationError, MissingDependencyError

from kokoro_endpoint.engines.device import DEVICES, NoGpuError, check_device, engine_for_device
from kokoro_endpoint.engines.loader import ENGINE_KINDS
from kokoro_endpoint.reading.lexicon import load_lexicon_file
from kokoro_endpoint.scheduling.admission import DEFAULT_MAX_LOAD
from kokoro_endpoint.scheduling.scheduler import SCHEDULING_POLICIES
from kokoro_endpoint.settings import Settings

PROG = "kokoro-endpoint"

__all__ = ["build_parser", "main", "settings_from_args"]


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    defaults = Settings()
    parser = argparse.ArgumentParser(prog=PROG, description="Kokoro-82M TTS server (Leg 1).")
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('kokoro-endpoint')}")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    parser.add_argument("--engine", choices=ENGINE_KINDS, default="auto", help="model runtime (default auto)")
    parser.add_argument(
        "--device",
        choices=DEVICES,
        default="auto",
        help="where the model runs: cuda (fail at start-up without a visible GPU; the GPU image), cpu, or "
        "auto (CUDA when available; default)",
    )
    parser.add_argument("--model-dir", type=Path, default=None, help="torch weights (default $SM_MODEL_DIR)")
    parser.add_argument(
        "--voices",
        type=Path,
        default=os.environ.get("KOKORO_VOICES") or None,
        help="Kokoro voice files for the onnx engine: a directory of NAME.bin (510x1x256 float32) or an "
        ".npz bundle such as kokoro-onnx's voices-v1.0.bin; af_heart becomes the default "
        "(default $KOKORO_VOICES)",
    )
    _add_serving_arguments(parser, defaults)
    parser.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    return parser


def _add_serving_arguments(parser: argparse.ArgumentParser, defaults: Settings) -> None:
    """Limits, text handling and scheduling: how the server shares its engine between requests."""
    parser.add_argument("--max-sessions", type=int, default=defaults.max_sessions, help="concurrent sessions")
    parser.add_argument("--max-text-chars", type=int, default=defaults.max_text_chars)
    parser.add_argument("--idle-timeout", type=float, default=defaults.idle_timeout_s, help="seconds")
    parser.add_argument(
        "--max-session-age",
        type=float,
        default=defaults.max_session_s,
        help="close a WebSocket session this many seconds after it opened (default %(default)s)",
    )
    parser.add_argument(
        "--send-timeout",
        type=float,
        default=defaults.send_timeout_s,
        help="drop a client that takes no frame for this many seconds (default %(default)s)",
    )
    parser.add_argument(
        "--clause-chars",
        type=int,
        default=defaults.clause_chars,
        help="synthesize sentences longer than this phrase by phrase (default %(default)s; 0: whole)",
    )
    parser.add_argument(
        "--lexicon",
        type=Path,
        default=os.environ.get("KOKORO_LEXICON") or None,
        help='a JSON file of {"word": "phonemes"} every request reads with (default $KOKORO_LEXICON)',
    )
    parser.add_argument(
        "--scheduling",
        choices=SCHEDULING_POLICIES,
        default=defaults.scheduling,
        help="which synthesis step runs next: deadline (the listener who runs out of audio first) or "
        "fifo (default %(default)s)",
    )
    parser.add_argument(
        "--no-opening-lane",
        dest="opening_lane",
        action="store_false",
        help="under deadline scheduling, a new request's first step waits for the running step instead of "
        "pausing it",
    )
    parser.add_argument(
        "--admission-max-load",
        type=float,
        default=DEFAULT_MAX_LOAD,
        help="refuse a new listener with busy when the listeners would need more than this share of the "
        "engine's measured time (default %(default)s; 0 turns admission off)",
    )


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings for the parsed arguments.

    Raises:
        ConfigurationError: a setting is invalid, or ``--voices`` names nothing.
    """
    if args.voices is not None and not args.voices.exists():
        raise ConfigurationError(f"--voices / KOKORO_VOICES: {args.voices} does not exist")
    return Settings(
        engine=engine_for_device(args.engine, args.device),
        device=args.device,
        model_dir=args.model_dir,
        voices=args.voices,
        max_sessions=args.max_sessions,
        max_text_chars=args.max_text_chars,
        idle_timeout_s=args.idle_timeout,
        max_session_s=args.max_session_age,
        send_timeout_s=args.send_timeout,
        clause_chars=args.clause_chars or None,
        lexicon=load_lexicon_file(args.lexicon) if args.lexicon else {},
        scheduling=args.scheduling,
        opening_lane=args.opening_lane,
        admission_max_load=args.admission_max_load or None,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until interrupted; exit 1 with one line when ``--device`` cannot be had, or when the
    engine cannot be loaded (a bad ``--voices``, missing weights): the server stops instead of answering
    ``/ping`` with ``loading`` for ever."""
    parser = build_parser()
    args = parser.parse_args(argv)
    import uvicorn

    from kokoro_endpoint.serving.app import create_app

    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        settings = settings_from_args(args)
        check_device(settings.device)
    except ValueError as error:
        parser.error(str(error))
    except (NoGpuError, MissingDependencyError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1
    servers: list[uvicorn.Server] = []

    def stop(_error: BaseException) -> None:
        for server in servers:
            server.should_exit = True

    app = create_app(settings=settings, on_load_failure=stop)
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        # The protocol layer drops absurd frames; the app answers merely large ones with an error frame.
        ws_max_size=4 * settings.max_frame_bytes,
        ws_ping_interval=20.0,
        ws_ping_timeout=20.0,
        timeout_graceful_shutdown=10,
    )
    servers.append(uvicorn.Server(config))
    servers[0].run()
    load_error = app.state.endpoint.load_error
    if load_error is not None:
        print(f"{PROG}: error: the engine could not be loaded: {load_error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
