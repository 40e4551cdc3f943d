"""Where a SageMaker stream's AWS settings come from: the region, the credentials and the service endpoint.

Each is found before any call to SageMaker, so a missing one is a clear ``connection_failed`` at once.
Credentials come from the standard AWS chain, the same one boto3 uses (environment, profiles, SSO,
container and instance roles).
"""

from __future__ import annotations

import logging
import os
from typing import Any, Final

from strands_voice_protocol.errors import TTSConnectionError

from strands_voice.transports._aws import BotocoreCredentials, SmithySDK, chain_credentials, chain_region
from strands_voice.transports.sagemaker._framing import default_endpoint_uri

__all__ = ["resolve_credentials", "resolve_endpoint_uri", "resolve_region"]

logger = logging.getLogger(__name__)

# Where the service endpoint may be overridden by environment (the SDK's own service id).
_ENDPOINT_ENV: Final = "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME_HTTP2"


def resolve_region(region: str | None) -> str:
    """``region``, else ``AWS_REGION`` / ``AWS_DEFAULT_REGION``, else the profile's region.

    Raises:
        TTSConnectionError: none of them names a region.
    """
    region = chain_region(region)
    if not region:
        raise TTSConnectionError(
            "connection_failed",
            "No AWS region for the SageMaker endpoint: add ?region=<region> to the sagemaker:// URL "
            "or set AWS_REGION.",
        )
    return region


async def resolve_credentials(sdk: SmithySDK) -> Any:
    """Credentials from the standard AWS chain (the one boto3 uses); None leaves it to the SDK's own.

    Raises:
        TTSConnectionError: the chain failed, or found no credentials.
    """
    try:
        credentials = await chain_credentials()
    except ImportError:
        return None
    except Exception as exc:
        logger.debug("credential lookup failed", exc_info=True)
        raise TTSConnectionError(
            "connection_failed",
            f"AWS credentials could not be loaded ({type(exc).__name__}); check AWS_PROFILE and the "
            "AWS config files.",
        ) from None
    if credentials is None:
        raise TTSConnectionError(
            "connection_failed",
            "No AWS credentials found for the SageMaker endpoint: set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, choose a profile with AWS_PROFILE, or run with an IAM role.",
        )
    return BotocoreCredentials(credentials, sdk.identity_cls)


def resolve_endpoint_uri(endpoint_uri: str | None, region: str) -> str:
    """``endpoint_uri``, else ``AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME_HTTP2``, else the regional endpoint."""
    return endpoint_uri or os.environ.get(_ENDPOINT_ENV) or default_endpoint_uri(region)
