"""Strands' ``BidiAgent`` with any Strands text model: :class:`VoiceCascade` (the ``listen`` extra).

Example::

    from strands.bidi import BidiAgent
    from strands_voice.cascade import VoiceCascade

    agent = BidiAgent(model=VoiceCascade(my_model, "ws://localhost:8080/invocations-bidirectional-stream"))
"""

from __future__ import annotations

from strands_voice.cascade._cascade import VoiceCascade

__all__ = ["VoiceCascade"]
