"""A local stand-in of AgentCore Runtime's WebSocket data plane: SigV4 checked, then relayed to an app.

:class:`AgentCoreStandIn` serves ``/runtimes/<url-encoded ARN>/ws`` on 127.0.0.1:<free port>. Each upgrade
is checked as AgentCore checks it, with botocore and a known secret key: a signature in the headers
(``Authorization``, ``X-Amz-Date``) or in the query (a presigned URL: ``X-Amz-Credential``, ``X-Amz-Date``,
``X-Amz-Expires``, ``X-Amz-Signature``). The signature is computed again from the request as received (its
method, ``Host``, path, query and signed headers) and compared; the date must be within five minutes, a
presigned URL unexpired, the scope ``<region>/bedrock-agentcore``. Anything else gets HTTP 403 with a JSON
``message``, as AgentCore answers; a session id outside AgentCore's 33 to 256 characters gets 400. A good
upgrade is relayed frame by frame to the app's ``/ws`` with the session id (header or the presigned URL's
parameter) in AgentCore's session header; frames over 32 KB from the caller close the connection (1009), as
AgentCore's limit does.
"""

from __future__ import annotations

import asyncio
import datetime
import hmac
import json
import re
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Final
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.http11 import Request, Response

ACCESS_KEY: Final = "AKIASTANDIN000000000"
SECRET_KEY: Final = "stand-in-secret-key/0123456789abcdefghij"
SESSION_HEADER: Final = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id"
FRAME_LIMIT: Final = 32 * 1024
_SKEW: Final = datetime.timedelta(minutes=5)
_AUTH: Final = re.compile(
    r"AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)"
)


class Refused(Exception):
    """Why an upgrade is refused."""


def _date(text: str) -> datetime.datetime:
    return datetime.datetime.strptime(text, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.UTC)


def _check_scope(credential: str, region: str) -> None:
    key, _day, scope_region, service, terminal = credential.split("/")
    if (
        key != ACCESS_KEY
        or scope_region != region
        or service != "bedrock-agentcore"
        or terminal != "aws4_request"
    ):
        raise Refused(f"credential scope {credential!r} is not this key's bedrock-agentcore in {region}")


def _same(expected: str, given: str) -> None:
    if not hmac.compare_digest(expected, given):
        raise Refused("The request signature we calculated does not match the signature you provided.")


def verify_headers(request: Request, region: str, now: datetime.datetime) -> None:
    """Check a signature in the headers (raises :class:`Refused`)."""
    match = _AUTH.fullmatch(request.headers.get("Authorization", ""))
    if match is None:
        raise Refused("Missing Authentication Token")
    credential, signed, signature = match.groups()
    _check_scope(credential, region)
    stamp = request.headers.get("X-Amz-Date", "")
    if abs(now - _date(stamp)) > _SKEW:
        raise Refused("Signature expired")
    headers = {name: request.headers[name] for name in signed.split(";")}
    aws = AWSRequest(method="GET", url=f"http://{request.headers['Host']}{request.path}", headers=headers)
    aws.context["timestamp"] = stamp
    auth = SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "bedrock-agentcore", region)
    canonical = auth.canonical_request(aws)
    _same(auth.signature(auth.string_to_sign(aws, canonical), aws), signature)


def verify_query(request: Request, region: str, now: datetime.datetime) -> None:
    """Check a presigned URL's signature (raises :class:`Refused`)."""
    split = urlsplit(request.path)
    params = dict(parse_qsl(split.query, keep_blank_values=True))
    signature = params.pop("X-Amz-Signature", "")
    if params.get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" or params.get("X-Amz-SignedHeaders") != "host":
        raise Refused("a presigned URL signs the host with AWS4-HMAC-SHA256")
    _check_scope(params.get("X-Amz-Credential", "////"), region)
    stamp = params["X-Amz-Date"]
    if now > _date(stamp) + datetime.timedelta(seconds=int(params["X-Amz-Expires"])):
        raise Refused("Request has expired")
    url = f"http://{request.headers['Host']}{split.path}?{urlencode(params)}"
    aws = AWSRequest(method="GET", url=url, headers={"host": request.headers["Host"]})
    aws.context["timestamp"] = stamp
    auth = SigV4QueryAuth(Credentials(ACCESS_KEY, SECRET_KEY), "bedrock-agentcore", region, expires=300)
    canonical = auth.canonical_request(aws)
    _same(auth.signature(auth.string_to_sign(aws, canonical), aws), signature)


def _session(request: Request) -> str:
    """The runtime session the upgrade names: the header, or a presigned URL's parameter."""
    query = dict(parse_qsl(urlsplit(request.path).query))
    return request.headers.get(SESSION_HEADER) or unquote(query.get(SESSION_HEADER, ""))


@dataclass
class AgentCoreStandIn:
    """The stand-in (module docstring); open it with :meth:`running`.

    Attributes:
        app_ws_url: The app's ``/ws`` the calls are relayed to.
        region: The region signatures must be scoped to.
        refused: Why each refused upgrade was refused, in order.
        sessions: The session id of each relayed call, in order.
        paths: The path and query of each relayed call, as received.
    """

    app_ws_url: str
    region: str = "us-east-1"
    endpoint_url: str = ""
    refused: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[AgentCoreStandIn]:
        """Serve on 127.0.0.1:<free port>; :attr:`endpoint_url` says where."""
        async with serve(
            self._call, "127.0.0.1", 0, process_request=self._check, max_size=FRAME_LIMIT
        ) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            self.endpoint_url = f"http://127.0.0.1:{port}"
            yield self

    def _check(self, connection: ServerConnection, request: Request) -> Response | None:
        now = datetime.datetime.now(datetime.UTC)
        try:
            if not re.fullmatch(r"/runtimes/[^/]+/ws", urlsplit(request.path).path):
                raise Refused(f"no such route: {urlsplit(request.path).path}")
            if "X-Amz-Signature" in request.path:
                verify_query(request, self.region, now)
            else:
                verify_headers(request, self.region, now)
        except (Refused, KeyError, ValueError) as why:
            return self._refuse(connection, HTTPStatus.FORBIDDEN, str(why))
        session = _session(request)
        if session and not 33 <= len(session) <= 256:
            return self._refuse(connection, HTTPStatus.BAD_REQUEST, "runtimeSessionId: 33 to 256 characters")
        return None

    def _refuse(self, connection: ServerConnection, status: HTTPStatus, why: str) -> Response:
        self.refused.append(why)
        response = connection.respond(status, json.dumps({"message": why}))
        response.headers["Content-Type"] = "application/json"
        return response

    async def _call(self, caller: ServerConnection) -> None:
        from strands_voice_tools.runtime.relay import relay

        assert caller.request is not None
        session = _session(caller.request)
        self.sessions.append(session)
        self.paths.append(caller.request.path)
        headers = {SESSION_HEADER: session} if session else {}
        async with connect(self.app_ws_url, additional_headers=headers, max_size=None) as app:
            await relay(caller, app, grace_s=5.0)


@contextmanager
def stand_in_thread(app_ws_url: str, region: str = "us-east-1") -> Iterator[AgentCoreStandIn]:
    """The stand-in served from a thread of its own (for code that runs its own event loop: a CLI)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="agentcore-stand-in", daemon=True)
    thread.start()
    stack = AsyncExitStack()
    stand_in = AgentCoreStandIn(app_ws_url, region)
    try:
        asyncio.run_coroutine_threadsafe(stack.enter_async_context(stand_in.running()), loop).result(30)
        yield stand_in
    finally:
        asyncio.run_coroutine_threadsafe(stack.aclose(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()
