"""kokoro-endpoint: the Kokoro-82M TTS server speaking Leg 1 of the strands-voice protocol.

Entry points: :func:`kokoro_endpoint.serving.app.create_app`,
:func:`kokoro_endpoint.engines.loader.load_engine`,
:class:`kokoro_endpoint.settings.Settings`, and the ``kokoro-endpoint`` console script
(:mod:`kokoro_endpoint.cli`).
"""

from __future__ import annotations

__all__: list[str] = []
