"""The one rule for putting the voice handler into an agent's callback chain: reached once, never twice.

Strands calls ``agent.callback_handler``; a chain may be a
:class:`~strands.handlers.callback_handler.CompositeCallbackHandler` (nested to any depth). A handler
reached twice would be called twice per event and speak every word twice, so both ways in
(:meth:`strands_voice.agent.VoicePlugin.init_agent` and the attach of
:meth:`~strands_voice.VoiceCallbackHandler.stream`) use :func:`joined`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strands.handlers.callback_handler import CompositeCallbackHandler, null_callback_handler


def reaches(chain: Any, handler: object) -> bool:
    """Whether calling ``chain`` calls ``handler`` (it is the chain, or inside its composites)."""
    if chain is handler:
        return True
    if isinstance(chain, CompositeCallbackHandler):
        return any(reaches(inner, handler) for inner in chain.handlers)
    return False


def joined(chain: Any, handler: Callable[..., None]) -> Any:
    """``chain`` with ``handler`` in it once: ``chain`` itself when it already reaches ``handler``,
    ``handler`` alone in place of no handler, else both composed (``chain`` first)."""
    if reaches(chain, handler):
        return chain
    if chain is None or chain is null_callback_handler:
        return handler
    return CompositeCallbackHandler(chain, handler)
