"""``strands-voice demo --serve --runtime-arn ARN``: the app's browser page, served here, calling a runtime.

A browser cannot sign a WebSocket upgrade with SigV4, and a deployed runtime serves only ``/invocations`` and
``/ws`` (no page). This local server serves the page the app ships (``agentcore_app/static``) and hands out
presigned URLs for the runtime's ``/ws``: ``GET /call-url?session_id=...`` answers
``{"url", "expires_at"}``, signed for that session (``X-Amz-*`` query auth, :data:`EXPIRES_S`). The page
(``call.js``) asks for a fresh URL right before each call, when ``index.html`` names the route in
``<meta name="call-url">`` (this server adds it), so a URL is never used after it expires: AgentCore checks
the signature at the upgrade only, and the call then lasts as long as it lasts.
``POST /invocations`` (the page's typed turns and Stop) is carried to the runtime with ``InvokeAgentRuntime``,
signed by boto3, its Server-Sent Events streamed back as they come.
"""

from __future__ import annotations

import argparse
import re
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

from strands_voice_protocol.errors import StrandsVoiceError

from strands_voice_tools.runtime.options import target_from_args
from strands_voice_tools.runtime.signing import SESSION_HEADER, RuntimeTarget, Signer

__all__ = ["CALL_URL_META", "EXPIRES_S", "page_app", "serve_page"]

#: How long a handed-out URL may wait before the page opens it (it is fetched right before each call).
EXPIRES_S: Final = 60
CALL_URL_META: Final = '<meta name="call-url" content="call-url">'
#: AgentCore's session ids (and the app's rule for them).
_SESSION: Final = re.compile(r"[A-Za-z0-9._-]{33,256}")

Invoker = Callable[[str, bytes], Iterator[bytes]]


def _invoker(target: RuntimeTarget) -> Invoker:
    """``InvokeAgentRuntime`` for the page's POSTs: ``(session_id, body) -> the SSE bytes``."""
    import boto3

    client = boto3.Session(region_name=target.region).client(
        "bedrock-agentcore", region_name=target.region, endpoint_url=target.endpoint_url
    )

    def invoke(session: str, body: bytes) -> Iterator[bytes]:
        kwargs: dict[str, Any] = {
            "agentRuntimeArn": target.arn,
            "runtimeSessionId": session,
            "payload": body,
            "contentType": "application/json",
            "accept": "text/event-stream",
        }
        if target.qualifier:
            kwargs["qualifier"] = target.qualifier
        stream = client.invoke_agent_runtime(**kwargs)["response"]
        try:
            yield from stream.iter_chunks(4096)
        finally:
            stream.close()

    return invoke


def page_app(
    target: RuntimeTarget,
    signer: Signer,
    static_dir: Path,
    *,
    expires_s: int = EXPIRES_S,
    invoke: Invoker | None = None,
) -> Any:
    """The Starlette app: ``/`` (the page, naming the call-URL route), ``/static``, ``/call-url``,
    ``/invocations``."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    html = (static_dir / "index.html").read_text(encoding="utf-8")
    html = html.replace("<head>", f"<head>\n    {CALL_URL_META}", 1)
    carry = invoke or _invoker(target)

    async def index(_request: Request) -> Response:
        return HTMLResponse(html, headers={"Cache-Control": "no-store"})

    async def call_url(request: Request) -> Response:
        session = request.query_params.get("session_id", "")
        if not _SESSION.fullmatch(session):
            return JSONResponse({"message": "session_id: 33 to 256 of A-Z a-z 0-9 . _ -"}, status_code=400)
        url, expires = signer.presigned_url(target, session, expires_s)
        return JSONResponse(
            {"url": url, "expires_at": expires.isoformat()}, headers={"Cache-Control": "no-store"}
        )

    async def invocations(request: Request) -> Response:
        session = request.headers.get(SESSION_HEADER, "")
        if not _SESSION.fullmatch(session):
            return JSONResponse({"type": "error", "code": "invalid_request", "message": "no session"}, 400)
        body = await request.body()
        # boto3 is blocking: Starlette iterates a plain iterator in its thread pool.
        return StreamingResponse(carry(session, body), media_type="text/event-stream")

    return Starlette(
        routes=[
            Route("/", index, methods=["GET"]),
            Route("/call-url", call_url, methods=["GET"]),
            Route("/invocations", invocations, methods=["POST"]),
            Mount("/static", app=StaticFiles(directory=static_dir), name="static"),
        ]
    )


def serve_page(args: argparse.Namespace) -> int:
    """Serve the page for ``args.runtime_arn`` on ``args.host:args.port`` until Ctrl-C; returns 0.

    Raises:
        StrandsVoiceError: a bad ARN or endpoint, or no credentials.
    """
    from agentcore_app.app import STATIC_DIR
    from kokoro_endpoint.serving.runner import running_server

    target = target_from_args(args)
    app = page_app(target, Signer(), STATIC_DIR)
    try:
        with running_server(app, host=args.host, port=args.port) as server:
            print(f"the page for {target.arn}", flush=True)
            print(f"open {server.base_url}/ in a browser; press Ctrl-C to stop", flush=True)
            threading.Event().wait()
    except KeyboardInterrupt:
        print("stopping", file=sys.stderr)
    except OSError as error:
        raise StrandsVoiceError(f"cannot serve on {args.host}:{args.port}: {error}") from None
    return 0
