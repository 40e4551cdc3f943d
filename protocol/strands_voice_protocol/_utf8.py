"""Encode text that crosses a wire as UTF-8, refusing what UTF-8 cannot carry with a clear error.

Python strings may hold lone surrogates (``"\\ud800"``, e.g. from JSON ``"\\ud800"`` or a broken
decoder); UTF-8 has no bytes for them, and ``str.encode`` would raise a ``UnicodeEncodeError`` whose
message is codec internals. Every encoder of user-controlled text goes through here instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from strands_voice_protocol.errors import TextEncodingError


def utf8(text: str, field: str) -> bytes:
    """``text`` as UTF-8 bytes.

    Raises:
        TextEncodingError: ``text`` holds a character UTF-8 cannot carry (a lone surrogate); the message
            names ``field``.
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise TextEncodingError(field) from None


def json_utf8(obj: Mapping[str, Any], what: str) -> bytes:
    """Compact JSON of ``obj`` as UTF-8 bytes (non-ASCII kept as is, NaN refused).

    Raises:
        TextEncodingError: a string in ``obj`` (a key or a value, at any depth) holds a lone surrogate;
            the message names its path, e.g. ``event.words[2].word``.
    """
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise TextEncodingError(_bad_path(obj, what) or what) from None


def _bad_path(value: Any, path: str) -> str | None:
    """The path of the first string under ``value`` that UTF-8 cannot carry, None if there is none."""
    if isinstance(value, str):
        return None if _encodable(value) else path
    if isinstance(value, Mapping):
        for key, item in value.items():
            key_text = str(key)
            if not _encodable(key_text):
                return f"{path} (a key)"
            found = _bad_path(item, f"{path}.{key_text}")
            if found is not None:
                return found
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        for index, item in enumerate(value):
            found = _bad_path(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
