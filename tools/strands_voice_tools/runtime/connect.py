"""Opening a signed WebSocket to a deployed runtime's ``/ws``; a refusal becomes one line for a person."""

from __future__ import annotations

import json
import logging
from typing import Any, Final

from strands_voice_protocol.errors import StrandsVoiceError

from strands_voice_tools.runtime.signing import RuntimeTarget, Signer

__all__ = ["FRAME_LIMIT", "open_runtime_socket", "refusal"]

logger = logging.getLogger(__name__)

#: The largest frame AgentCore carries: what a client sends stays within it.
FRAME_LIMIT: Final = 32 * 1024


def refusal(error: Any) -> str:
    """What a refused upgrade (websockets' ``InvalidStatus``) says, on one line: status and message."""
    response = error.response
    text = bytes(response.body or b"").decode("utf-8", "replace").strip()
    try:
        message = json.loads(text).get("message", text) if text else ""
    except (ValueError, AttributeError):
        message = text
    reason = " ".join(str(message).split())[:200]
    return f"HTTP {response.status_code}" + (f": {reason}" if reason else "")


async def open_runtime_socket(
    target: RuntimeTarget, signer: Signer, session_id: str, *, open_timeout_s: float = 30.0
) -> Any:
    """A ``websockets`` client connection to ``target``'s ``/ws``, signed in its headers.

    Raises:
        StrandsVoiceError: the runtime refused the upgrade (the status and its message) or could not be
            reached.
    """
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidHandshake, InvalidStatus

    url, headers = signer.headers(target, session_id)
    logger.debug("session_id=<%s>, url=<%s> | connecting to the runtime", session_id, url)
    try:
        return await connect(url, additional_headers=headers, max_size=None, open_timeout=open_timeout_s)
    except InvalidStatus as error:
        raise StrandsVoiceError(f"the runtime refused the connection ({refusal(error)})") from None
    except (OSError, TimeoutError, InvalidHandshake) as error:
        raise StrandsVoiceError(f"cannot reach the runtime at {target.endpoint_url}: {error}") from None
