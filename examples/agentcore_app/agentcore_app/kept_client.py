"""Strands' OpenAI model with its client kept open between requests: no new client before each answer.

Strands' ``OpenAIModel`` makes an ``AsyncOpenAI`` client for every request and closes it after: a new SSL
context (22 ms on a quiet 2-core CPU, 54 ms beside the turn-end model) and a new connection (a TLS handshake
to a hosted API) before every answer, on the path a caller waits on. :class:`KeptClientOpenAIModel` makes
its client on its first request and keeps it, with its open connections, for later requests on the same
event loop (an app serves every call on one). A request on another loop gets a client of its own, as Strands
makes it (an httpx connection cannot move between loops).

Strands leaves a stream it stops reading open and relies on closing the client: here each request's
streams are closed when the request ends, so a dropped answer (a barge-in, a speculation the caller went
on from) still stops the model's stream at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import openai
from strands.models.openai import OpenAIModel

__all__ = ["KeptClientOpenAIModel"]

logger = logging.getLogger(__name__)


class KeptClientOpenAIModel(OpenAIModel):
    """``OpenAIModel`` whose client stays open between requests on one event loop (see the module
    docstring). Takes ``OpenAIModel``'s arguments but ``client`` (it makes its own); :meth:`aclose` closes
    the kept client."""

    def __init__(self, **kwargs: Any) -> None:
        if kwargs.get("client") is not None:
            raise ValueError("KeptClientOpenAIModel makes its own client: give client_args, not client")
        super().__init__(**kwargs)
        self._kept: tuple[asyncio.AbstractEventLoop, openai.AsyncOpenAI] | None = None

    @contextlib.asynccontextmanager
    async def _get_client(self) -> AsyncIterator[Any]:
        loop = asyncio.get_running_loop()
        if self._kept is None or self._kept[0].is_closed():
            self._kept = (loop, openai.AsyncOpenAI(**self._resolve_client_args()))
            logger.debug("client kept for this event loop")
        kept_loop, client = self._kept
        if kept_loop is not loop:
            async with super()._get_client() as own:
                yield own
            return
        streams: list[Any] = []
        try:
            yield _request_view(client, streams)
        finally:
            for stream in streams:
                await stream.close()  # a stream read to its end is closed already: this stops a dropped one

    async def aclose(self) -> None:
        """Close the kept client (call it on the loop that used it; elsewhere it is only let go)."""
        kept, self._kept = self._kept, None
        if kept is not None and kept[0] is asyncio.get_running_loop():
            await kept[1].close()


def _request_view(client: openai.AsyncOpenAI, streams: list[Any]) -> Any:
    """The kept client as one request sees it: what ``OpenAIModel`` calls, each stream it opens noted."""

    async def create(**request: Any) -> Any:
        response = await client.chat.completions.create(**request)
        if isinstance(response, openai.AsyncStream):
            streams.append(response)
        return response

    return SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)), beta=client.beta)
