"""The listening extra's imports, each with the error that says what to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from strands_voice_protocol.errors import MissingDependencyError

from strands_voice.transports import SmithySDK, load_smithy_sdk

__all__ = ["INSTALL_HINT", "import_extra", "transcribe_sdk"]

INSTALL_HINT = "pip install 'strands-voice[listen]' (in this repository: uv sync --group listen)"


def import_extra(module: str) -> ModuleType:
    """Import ``module`` of the ``listen`` extra, or raise :class:`MissingDependencyError` naming it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingDependencyError(f"{module} is not installed: {INSTALL_HINT}") from error


def transcribe_sdk() -> SmithySDK:
    """Import the Transcribe streaming SDK (with awscrt), or say what to install."""
    return load_smithy_sdk("aws_sdk_transcribe_streaming", "AsyncTranscribeStreaming", INSTALL_HINT)
