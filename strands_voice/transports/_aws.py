"""The AWS settings every AWS-backed part of the library finds the same way: the region and the credentials.

Both come from the standard chain, the one boto3 uses (environment, profiles, SSO, container and instance
roles), through botocore, which Strands already installs. The SageMaker transport and the Transcribe
recognizer each turn a missing one into their own error. Both call their service through a smithy HTTP/2
SDK, imported lazily the same way (:func:`load_smithy_sdk`), whose unmodeled errors read the same way
(:func:`unmodeled_error`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final

from strands_voice_protocol.errors import MissingDependencyError

__all__ = [
    "BotocoreCredentials",
    "SmithySDK",
    "chain_credentials",
    "chain_region",
    "load_smithy_sdk",
    "unmodeled_error",
]

# How the smithy SDKs word an HTTP error they do not model: "... - status: 403 - id: ns#AccessDenied".
_UNMODELED_ERROR: Final = re.compile(r"status: (?P<status>\d+)(?: - id: (?:[\w.]+#)?(?P<id>\w+))?")


def chain_region(region: str | None) -> str | None:
    """``region``, else ``AWS_REGION`` / ``AWS_DEFAULT_REGION``, else the profile's region, else None."""
    region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if not region:
        with contextlib.suppress(Exception):
            region = importlib.import_module("botocore.session").Session().get_config_variable("region")
    return str(region) if region else None


async def chain_credentials() -> Any:
    """botocore's credentials from the standard chain (looked up on a thread), or None when it found none.

    Raises:
        ImportError: botocore is not installed.
        Exception: whatever the chain raised (a broken profile, an SSO token expired, ...).
    """
    botocore_session = importlib.import_module("botocore.session")
    return await asyncio.to_thread(botocore_session.Session().get_credentials)


class BotocoreCredentials:
    """An AWS SDK identity resolver over botocore's credentials (the one boto3 and Strands use).

    botocore covers every standard source, including container and instance roles, which the HTTP/2
    SDKs' built-in chain leaves to extra packages. Refreshable credentials refresh on a thread.

    Args:
        credentials: botocore credentials (:func:`chain_credentials`).
        identity_cls: The SDK's ``AWSCredentialsIdentity``.
    """

    def __init__(self, credentials: Any, identity_cls: Any) -> None:
        self._credentials = credentials
        self._identity_cls = identity_cls

    async def get_identity(self, *, properties: Mapping[str, Any] | None = None) -> Any:
        """The current access key, secret and session token as the SDK's identity."""
        refresh_needed = getattr(self._credentials, "refresh_needed", None)
        if callable(refresh_needed) and refresh_needed():
            frozen = await asyncio.to_thread(self._credentials.get_frozen_credentials)
        else:
            frozen = self._credentials.get_frozen_credentials()
        return self._identity_cls(
            access_key_id=frozen.access_key,
            secret_access_key=frozen.secret_key,
            session_token=frozen.token,
        )


def unmodeled_error(exc: BaseException) -> tuple[str, int] | None:
    """The error's name and HTTP status when ``exc`` is a smithy SDK's ``CallError`` it does not model.

    The name is the error shape's (``AccessDeniedException``), else ``HTTP<status>``; None for any other
    exception.
    """
    if type(exc).__name__ != "CallError":
        return None
    match = _UNMODELED_ERROR.search(getattr(exc, "message", None) or str(exc))
    if match is None:
        return None
    return match["id"] or f"HTTP{match['status']}", int(match["status"])


@dataclass(frozen=True, slots=True)
class SmithySDK:
    """The lazily imported pieces of a smithy HTTP/2 AWS SDK (SageMaker runtime, Transcribe streaming)."""

    client_cls: Any
    config_cls: Any
    models: ModuleType
    crt_client_cls: Any
    call_error: type[BaseException]
    identity_cls: Any


def load_smithy_sdk(package: str, service: str, install_hint: str) -> SmithySDK:
    """Import the SDK ``package`` (its ``{service}Client``, ``{service}Config`` and models) with awscrt.

    Args:
        package: The SDK's module (``aws_sdk_transcribe_streaming``).
        service: Its client's name without ``Client`` (``AsyncTranscribeStreaming``).
        install_hint: What to install, said when a module is missing.

    Raises:
        MissingDependencyError: A module is not installed (the message names it and ``install_hint``).
    """

    def load(module: str) -> ModuleType:
        try:
            return importlib.import_module(module)
        except ImportError as error:
            raise MissingDependencyError(f"{module} is not installed: {install_hint}") from error

    load("awscrt")  # the HTTP/2 client the duplex streams need
    load(package)  # the package itself first: a missing SDK is named as such
    return SmithySDK(
        client_cls=getattr(load(f"{package}.client"), f"{service}Client"),
        config_cls=getattr(load(f"{package}.config"), f"{service}Config"),
        models=load(f"{package}.models"),
        crt_client_cls=load("smithy_http.aio.crt").AWSCRTHTTPClient,
        call_error=load("smithy_core.exceptions").CallError,
        identity_cls=load("smithy_aws_core.identity").AWSCredentialsIdentity,
    )
