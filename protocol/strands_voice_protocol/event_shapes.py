"""What a JSON event must hold, read from its ``TypedDict`` declaration (sans-I/O, no dependency).

:class:`EventShapes` reads each declared event type once, with :func:`typing.get_type_hints`: its
``type`` (the ``Literal``), and per field the JSON types it accepts (``int``; ``float`` takes any number;
``str``; ``bool``; ``list[...]`` a list), whether it may be null (``X | None``) and whether it may be left
out (``X | None`` or ``NotRequired``). A field may declare the decimals the wire keeps
(``Annotated[float, Decimals(3)]``). :mod:`.events` derives its validation and the builder's rounding from
its declarations this way, so a field is written in one place.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NotRequired, Union, get_args, get_origin, get_type_hints, is_typeddict

__all__ = ["Decimals", "EventShapes"]

_JSON_NAMES: Final[dict[type, str]] = {
    int: "int",
    float: "a number",
    str: "str",
    bool: "bool",
    list: "list",
    dict: "an object",
}


@dataclass(frozen=True, slots=True)
class Decimals:
    """A float field's decimals on the wire (``Annotated[float, Decimals(3)]``): builders round to them."""

    places: int


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    kinds: tuple[type, ...]  # the JSON types it accepts (bool only when declared)
    nullable: bool
    optional: bool  # may be absent
    decimals: int | None

    def accepts(self, value: object) -> bool:
        if isinstance(value, bool):
            return bool in self.kinds
        return isinstance(value, self.kinds)

    def describe(self) -> str:
        return _JSON_NAMES[self.kinds[0]]


def _json_kinds(hint: Any) -> tuple[type, ...]:
    """The Python types a JSON value of a declared (non-None) type decodes to."""
    origin = get_origin(hint) or hint
    if is_typeddict(origin):
        return (dict,)  # a nested object: its own fields are its declaration's to check
    if origin is float:
        return (float, int)
    if origin in _JSON_NAMES:
        return (origin,)
    raise TypeError(f"no JSON type for the declared {hint!r}")


def _fields(declaration: type) -> tuple[str, tuple[_Field, ...]]:
    """An event declaration's ``type`` value and its fields (``type`` itself aside)."""
    hints = get_type_hints(declaration)
    extras = get_type_hints(declaration, include_extras=True)
    (kind,) = get_args(hints["type"])
    fields: list[_Field] = []
    for name, hint in hints.items():
        if name == "type":
            continue
        union = get_origin(hint) in (Union, types.UnionType)
        members = get_args(hint) if union else (hint,)
        nullable = type(None) in members
        kinds = tuple(k for member in members if member is not type(None) for k in _json_kinds(member))
        extra = extras[name]
        # NotRequired is read from the hints: with postponed annotations __optional_keys__ misses it.
        not_required = get_origin(extra) is NotRequired
        if not_required:
            (extra,) = get_args(extra)
        metadata = getattr(extra, "__metadata__", ())
        decimals = next((meta.places for meta in metadata if isinstance(meta, Decimals)), None)
        optional = nullable or not_required
        fields.append(_Field(name, kinds, nullable, optional, decimals))
    return kind, tuple(fields)


class EventShapes:
    """The shapes of a union of event declarations, by ``type``.

    Args:
        union: The declarations (``A | B | ...``, or one), in the order their types first appear on the wire.
    """

    def __init__(self, union: object) -> None:
        declarations = get_args(union) if get_origin(union) in (Union, types.UnionType) else (union,)
        self._by_type = dict(_fields(declaration) for declaration in declarations)

    @property
    def types(self) -> tuple[str, ...]:
        """Every declared ``type``, in declaration order."""
        return tuple(self._by_type)

    def validate(self, value: object) -> dict[str, Any] | None:
        """Check a decoded JSON value against the declaration of its ``type``.

        Fields beyond the declared ones are kept. A ``type`` not declared gives None (a newer peer may
        send more).

        Raises:
            ValueError: not a JSON object with a string ``type``, or a declared field missing or of the
                wrong JSON type; the message names the field.
        """
        if not isinstance(value, dict):
            raise ValueError("a Leg 3 event must be a JSON object")
        kind = value.get("type")
        if not isinstance(kind, str):
            raise ValueError("a Leg 3 event needs a string 'type'")
        fields = self._by_type.get(kind)
        if fields is None:
            return None
        for field in fields:
            if field.name not in value or value[field.name] is None:
                if field.nullable or (field.optional and field.name not in value):
                    continue
                raise ValueError(f"a {kind} event needs {field.describe()} {field.name!r}")
            if not field.accepts(value[field.name]):
                null = " or null" if field.nullable else ""
                raise ValueError(f"a {kind} event's {field.name!r} must be {field.describe()}{null}")
        return value

    def rounded(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of a built event with each float field rounded to the decimals it declares."""
        out = dict(event)
        for field in self._by_type[out["type"]]:
            if field.decimals is not None and isinstance(out.get(field.name), float | int):
                out[field.name] = round(out[field.name], field.decimals)
        return out
