"""PortAudio through ``sounddevice`` (the ``speakers`` extra): the module, a device by name, a block's time.

Imported lazily: each error says what to install, or which devices there are.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Literal

from strands_voice_protocol.errors import ConfigurationError, MissingDependencyError

__all__ = ["INSTALL_HINT", "block_time", "find_device", "import_devices_extra", "sounddevice"]

INSTALL_HINT = "pip install 'strands-voice[speakers]' (in this repository: uv sync --group speakers)"

Kind = Literal["input", "output"]


def import_devices_extra(module: str, user: str = "the sound devices") -> ModuleType:
    """Import ``module`` of the ``speakers`` extra, or raise :class:`MissingDependencyError` naming it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingDependencyError(f"{user} need {module}: {INSTALL_HINT}") from error


def sounddevice(user: str) -> Any:
    """The ``sounddevice`` module, or an error naming what ``user`` needs installed."""
    try:
        import sounddevice as sd
    except ImportError:
        raise MissingDependencyError(f"{user} needs sounddevice: {INSTALL_HINT}") from None
    except OSError as error:  # sounddevice loads the PortAudio library when imported
        raise MissingDependencyError(
            f"{user} needs the PortAudio library ({error}): apt-get install libportaudio2 on Debian or "
            "Ubuntu, brew install portaudio on macOS"
        ) from None
    return sd


def find_device(sd: Any, device: int | str | None, kind: Kind, user: str) -> dict[str, Any]:
    """The PortAudio ``kind`` device ``device`` names (None: the default one).

    Raises:
        ConfigurationError: no such device (the message lists the ones there are).
    """
    try:
        info = sd.query_devices(device, kind) if device is not None else sd.query_devices(kind=kind)
    except (ValueError, sd.PortAudioError) as error:
        there = [str(d["name"]) for d in sd.query_devices() if int(d[f"max_{kind}_channels"]) > 0]
        wanted = f"no default {kind} device" if device is None else f"no {kind} device {device!r}"
        raise ConfigurationError(
            f"{user}: {wanted} ({error}); {kind} devices here: {', '.join(there) or 'none'}"
        ) from None
    return dict(info)


def block_time(reported: float, current: float, offset_s: float) -> float:
    """When a block's first sample is heard (output) or was captured (input), on PortAudio's clock.

    ``reported`` is the callback's ``outputBufferDacTime`` / ``inputBufferAdcTime``; a host API that does
    not know it reports 0, and then the block is placed ``offset_s`` (plus or minus the stream's latency)
    from the callback's ``currentTime``.
    """
    return reported if reported > 0 else current + offset_s
