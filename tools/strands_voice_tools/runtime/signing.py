"""Where a deployed AgentCore runtime's ``/ws`` is, and how a connection to it is signed (SigV4).

:func:`runtime_target` finds the data plane the way boto3 does: ``--endpoint-url``, else
``AWS_ENDPOINT_URL_BEDROCK_AGENTCORE`` (or ``AWS_ENDPOINT_URL``, or the profile's ``endpoint_url``), else
``https://bedrock-agentcore.<region>.amazonaws.com``; an ``http://`` endpoint means plain ``ws://`` (a
local stand-in). The runtime's region is the ARN's unless ``--region`` says otherwise.

:class:`Signer` signs with botocore's ``SigV4Auth`` (headers: ``strands-voice talk``, the phone bridge) and
``SigV4QueryAuth`` (a presigned URL: the browser page), service ``bedrock-agentcore``. bedrock-agentcore's
``AgentCoreRuntimeClient`` builds the same requests but always says ``wss://`` and presigns the host name
without its port, so a signature for ``127.0.0.1:PORT`` would not match the ``Host`` a client sends: here
the signed host is the URL's ``host[:port]``, exactly what the WebSocket client sends.
"""

from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote, urlencode, urlsplit

from strands_voice_protocol.errors import StrandsVoiceError

__all__ = [
    "MAX_PRESIGN_S",
    "SERVICE",
    "SESSION_HEADER",
    "RuntimeTarget",
    "Signer",
    "new_session_id",
    "runtime_target",
]

SERVICE: Final = "bedrock-agentcore"
SESSION_HEADER: Final = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id"
#: The longest a presigned URL may live (AgentCore's own limit).
MAX_PRESIGN_S: Final = 300


def new_session_id(prefix: str = "strands-voice") -> str:
    """A runtime session id (AgentCore wants 33 characters or more)."""
    return f"{prefix}-{uuid.uuid4().hex}"


@dataclass(frozen=True)
class RuntimeTarget:
    """A deployed runtime's ``/ws``.

    Attributes:
        arn: The runtime's ARN.
        region: The region its requests are signed for.
        endpoint_url: The data plane (``https://...`` or a stand-in's ``http://...``).
        qualifier: The runtime endpoint (``DEFAULT`` when None).
    """

    arn: str
    region: str
    endpoint_url: str
    qualifier: str | None = None

    def http_url(self, query: dict[str, str] | None = None) -> str:
        """The ``/ws`` URL in its ``http(s)://`` form (what is signed), with ``qualifier`` and ``query``."""
        params = {**({"qualifier": self.qualifier} if self.qualifier else {}), **(query or {})}
        base = f"{self.endpoint_url.rstrip('/')}/runtimes/{quote(self.arn, safe='')}/ws"
        return f"{base}?{urlencode(params)}" if params else base


def ws_scheme(url: str) -> str:
    """``https://`` → ``wss://``, ``http://`` → ``ws://``."""
    scheme, rest = url.split("://", 1)
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest}"


def _arn_region(arn: str) -> str:
    parts = arn.split(":")
    if len(parts) < 6 or parts[0] != "arn" or parts[2] != SERVICE or not parts[5].startswith("runtime/"):
        raise StrandsVoiceError(
            f"not an AgentCore runtime ARN: {arn!r} "
            "(arn:aws:bedrock-agentcore:<region>:<account>:runtime/<id>)"
        )
    return parts[3]


def runtime_target(
    arn: str, *, region: str | None = None, qualifier: str | None = None, endpoint_url: str | None = None
) -> RuntimeTarget:
    """The runtime ``arn`` names, reached as boto3 would reach ``bedrock-agentcore`` (module docstring).

    Raises:
        StrandsVoiceError: ``arn`` is not a runtime ARN, or the endpoint is not an http(s) URL.
    """
    import boto3

    region = region or _arn_region(arn)
    if endpoint_url is None:
        # The client's own resolution reads AWS_ENDPOINT_URL_BEDROCK_AGENTCORE, AWS_ENDPOINT_URL and the
        # profile's endpoint settings, in boto3's order.
        client = boto3.Session(region_name=region).client(SERVICE, region_name=region)
        endpoint_url = str(client.meta.endpoint_url)
    if urlsplit(endpoint_url).scheme not in ("http", "https"):
        raise StrandsVoiceError(f"the endpoint URL must start with http:// or https://: {endpoint_url!r}")
    return RuntimeTarget(arn, region, endpoint_url, qualifier)


class Signer:
    """Signs connections to a runtime with the credentials boto3 finds (or ``credentials``).

    Args:
        credentials: botocore credentials; None: the default chain's (profile, environment, role).

    Raises:
        StrandsVoiceError: no credentials were found.
    """

    def __init__(self, credentials: Any = None) -> None:
        if credentials is None:
            import boto3

            credentials = boto3.Session().get_credentials()
        if credentials is None:
            raise StrandsVoiceError(
                "no AWS credentials found (set a profile with AWS_PROFILE, or AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY)"
            )
        self._credentials = credentials

    def headers(self, target: RuntimeTarget, session_id: str) -> tuple[str, dict[str, str]]:
        """``(ws_url, headers)`` for a WebSocket upgrade signed in its headers (the session id rides
        alongside, as AgentCore's own client sends it)."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        url = target.http_url()
        request = AWSRequest(method="GET", url=url)
        SigV4Auth(self._credentials.get_frozen_credentials(), SERVICE, target.region).add_auth(request)
        # Host is signed (botocore takes it from the URL, port included) and sent by the WebSocket client.
        headers = {name: str(value) for name, value in request.headers.items() if name.lower() != "host"}
        headers[SESSION_HEADER] = session_id
        return ws_scheme(url), headers

    def presigned_url(
        self, target: RuntimeTarget, session_id: str, expires_s: int = MAX_PRESIGN_S
    ) -> tuple[str, datetime.datetime]:
        """A ``ws(s)://`` URL signed in its query (``X-Amz-*``) for a browser, and when it expires.

        Raises:
            StrandsVoiceError: ``expires_s`` is over :data:`MAX_PRESIGN_S` or not positive.
        """
        from botocore.auth import SigV4QueryAuth
        from botocore.awsrequest import AWSRequest

        if not 0 < expires_s <= MAX_PRESIGN_S:
            raise StrandsVoiceError(f"a presigned URL lives 1 to {MAX_PRESIGN_S} s, not {expires_s}")
        request = AWSRequest(method="GET", url=target.http_url({SESSION_HEADER: session_id}))
        frozen = self._credentials.get_frozen_credentials()
        signed_at = datetime.datetime.now(datetime.UTC)
        SigV4QueryAuth(frozen, SERVICE, target.region, expires=expires_s).add_auth(request)
        return ws_scheme(str(request.url)), signed_at + datetime.timedelta(seconds=expires_s)
