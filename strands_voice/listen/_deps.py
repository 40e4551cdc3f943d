"""The listening extra's imports, each with the error that says what to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from strands_voice_protocol.errors import MissingDependencyError

__all__ = ["INSTALL_HINT", "import_extra"]

INSTALL_HINT = "pip install 'strands-voice[listen]' (in this repository: uv sync --group listen)"


def import_extra(module: str) -> ModuleType:
    """Import ``module`` of the ``listen`` extra, or raise :class:`MissingDependencyError` naming it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingDependencyError(f"{module} is not installed: {INSTALL_HINT}") from error
