"""Reading the fields of a decoded Leg 1 frame by their declared types (sans-I/O).

Each reader checks one JSON type; :func:`read_dataclass` reads a whole server message (or a word) from the
types its dataclass declares, so :mod:`.frames` declares each message once. Every failure is a
:class:`~strands_voice_protocol.errors.FrameDecodeError` whose message, written for a person, names the
field: the endpoint echoes it in an ``error`` frame. Used by :mod:`.frames` only.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, fields
from types import NoneType, UnionType
from typing import TYPE_CHECKING, Any, get_args, get_origin, get_type_hints

from strands_voice_protocol.errors import FrameDecodeError
from strands_voice_protocol.limits import MAX_REQUEST_ID_CHARS

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "encodable",
    "optional_bool",
    "optional_count",
    "optional_number",
    "optional_request_id",
    "optional_str",
    "parse_object",
    "read_dataclass",
    "required_number",
    "required_str",
    "type_hints",
]


def parse_object(data: str | bytes) -> dict[str, Any]:
    """Parse a frame as a JSON object, raising FrameDecodeError(invalid_json) otherwise."""
    if isinstance(data, bytes | bytearray | memoryview):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            raise FrameDecodeError("invalid_json", "The message is not valid UTF-8.") from None
    else:
        text = data
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        raise FrameDecodeError("invalid_json", "The message is not valid JSON.") from None
    if not isinstance(obj, dict):
        raise FrameDecodeError("invalid_json", "The message must be a JSON object.")
    return obj


def encodable(value: str, key: str) -> str:
    """Reject lone surrogates (JSON ``"\\udc00"``): they cannot be echoed back as UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise FrameDecodeError("invalid_request", f"'{key}' is not valid Unicode text.") from None
    return value


_REQUEST_ID = re.compile(rf"[!-~]{{1,{MAX_REQUEST_ID_CHARS}}}")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _finite(value: float) -> bool:
    """Whether ``value`` is a finite float, or an int a float can hold (JSON allows ``1e400`` and 10**400)."""
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _optional(obj: dict[str, Any], key: str, accepts: Callable[[Any], bool], expected: str) -> Any:
    """``obj[key]``, or None when absent or null; a value ``accepts`` refuses is an ``invalid_request``."""
    value = obj.get(key)
    if value is not None and not accepts(value):
        raise FrameDecodeError("invalid_request", f"'{key}' must be {expected}.")
    return value


def optional_str(obj: dict[str, Any], key: str) -> str | None:
    """A string that UTF-8 can carry, or None when absent."""
    value: str | None = _optional(obj, key, lambda v: isinstance(v, str), "a string")
    return None if value is None else encodable(value, key)


def optional_request_id(obj: dict[str, Any], key: str) -> str | None:
    """A request id (1 to ``MAX_REQUEST_ID_CHARS`` visible ASCII characters), or None when absent.

    The endpoint echoes it in a response header and writes it to its log: anything else (a newline that
    would forge a log line, a character a header cannot carry) is refused here, at every door alike.
    """
    value: str | None = _optional(obj, key, lambda v: isinstance(v, str), "a string")
    if value is not None and not _REQUEST_ID.fullmatch(value):
        raise FrameDecodeError(
            "invalid_request",
            f"'{key}' must be 1 to {MAX_REQUEST_ID_CHARS} visible ASCII characters (no spaces or controls).",
        )
    return value


def optional_bool(obj: dict[str, Any], key: str) -> bool | None:
    """``true`` or ``false``, or None when absent."""
    value: bool | None = _optional(obj, key, lambda v: isinstance(v, bool), "true or false")
    return value


def optional_count(obj: dict[str, Any], key: str) -> int | None:
    """A non-negative JSON integer, or None when absent."""
    value: int | None = _optional(
        obj, key, lambda v: _is_number(v) and isinstance(v, int) and v >= 0, "a whole number of 0 or more"
    )
    return value


def optional_number(obj: dict[str, Any], key: str) -> float | None:
    """A finite JSON number as a float, or None when absent."""
    value = _optional(obj, key, lambda v: _is_number(v) and _finite(v), "a number")
    return None if value is None else float(value)


def required_str(obj: dict[str, Any], key: str) -> str:
    """A string a server message must carry."""
    value = obj.get(key)
    if not isinstance(value, str):
        raise FrameDecodeError("invalid_request", f"A server message needs a string '{key}'.")
    return value


def required_number(obj: dict[str, Any], key: str, *, integer: bool = False) -> float:
    """A finite, non-negative JSON number (an integer if ``integer``) a server message must carry."""
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FrameDecodeError("invalid_request", f"A server message needs a number '{key}'.")
    if not _finite(value) or value < 0 or (integer and value != int(value)):
        raise FrameDecodeError("invalid_request", f"A server message has an invalid '{key}'.")
    return float(value)


_HINTS: dict[type, dict[str, Any]] = {}


def type_hints(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints(cls)``, resolved once per class."""
    if cls not in _HINTS:
        _HINTS[cls] = get_type_hints(cls)
    return _HINTS[cls]


def read_dataclass[T: DataclassInstance](
    cls: type[T], obj: dict[str, Any], absent: Mapping[str, object] | None = None
) -> T:
    """A dataclass from a server message's JSON object, each field read by its declared type.

    ``str``, ``int`` and ``float`` (finite, not negative) are required; ``X | None`` reads null or absent
    as None; ``tuple[D, ...]`` is a list of objects, each read as the dataclass ``D``. A field left out
    takes its default, else ``absent[name]`` when given.
    """
    hints = type_hints(cls)
    return cls(
        **{field.name: _read_field(obj, field, hints[field.name], absent or {}) for field in fields(cls)}
    )


def _read_field(obj: dict[str, Any], field: Field[Any], hint: Any, absent: Mapping[str, object]) -> Any:
    name = field.name
    if name not in obj:
        if field.default is not MISSING:
            return field.default
        if name in absent:
            return absent[name]
    if get_origin(hint) is UnionType:  # "X | None"
        if obj.get(name) is None:
            return None
        (hint,) = (arg for arg in get_args(hint) if arg is not NoneType)
    if hint is str:
        return required_str(obj, name)
    if hint is int:
        return int(required_number(obj, name, integer=True))
    if hint is float:
        return float(required_number(obj, name))
    items = obj.get(name)
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise FrameDecodeError("invalid_request", f"A server message needs a list of objects '{name}'.")
    (item_cls, _more) = get_args(hint)  # tuple[D, ...]
    return tuple(read_dataclass(item_cls, item) for item in items)
