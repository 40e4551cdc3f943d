"""Import paths of the previous release, kept for one release: each one line, old name -> new home.

The library's modules moved into concept folders (``agent``, ``speech``, ``session``, ``transports``,
``devices``, ``listen``, ``cascade``). ``import strands_voice.handler`` (and ``from strands_voice.bidi import
VoiceCascade``) still work: a finder on ``sys.meta_path`` hands out the module's new home under its old
name, with a ``DeprecationWarning`` that names the new import.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType
from typing import Final

__all__ = ["MOVED", "install"]

#: Old module path -> the package (or module) that now provides its names.
MOVED: Final[dict[str, str]] = {
    "strands_voice.handler": "strands_voice.agent",
    "strands_voice.plugin": "strands_voice.agent",
    "strands_voice.run": "strands_voice.agent",
    "strands_voice.options": "strands_voice.speech",
    "strands_voice.tracing": "strands_voice.speech",
    "strands_voice.retry": "strands_voice.session",
    "strands_voice.session.driver": "strands_voice.session",
    "strands_voice.session.events": "strands_voice.session",
    "strands_voice.transport": "strands_voice.transports",
    "strands_voice.transport_url": "strands_voice.transports",
    "strands_voice.websocket": "strands_voice.transports",
    "strands_voice.sagemaker": "strands_voice.transports.sagemaker",
    "strands_voice.bidi": "strands_voice.cascade",
    "strands_voice.listen.events": "strands_voice.listen",
    "strands_voice.listen.listener": "strands_voice.listen",
    "strands_voice.listen.recognizer": "strands_voice.listen",
    "strands_voice.listen.settings": "strands_voice.listen",
    "strands_voice.listen.transcribe": "strands_voice.listen",
    "strands_voice.listen.vad": "strands_voice.listen",
    "strands_voice.listen.whisper": "strands_voice.listen",
}


class _MovedLoader(importlib.abc.Loader):
    """Loads an old path as its new home (the same module object: one set of classes)."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = MOVED[spec.name]
        warnings.warn(
            f"{spec.name} moved: import from {new} (the old path goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the new home is already imported."""


class _MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED` (and nothing else)."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, _MovedLoader())


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
