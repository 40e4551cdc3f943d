"""English text normalization for speech (pure functions): write out what people say, keep a char map.

An LLM writes ``e.g.``, ``approx.``, ``$1.5M``, ``5 km``, ``10:30am``, ``3–5`` or ``jane.doe@example.com``;
misaki reads those letter by letter or not at all. :func:`normalize_for_speech` rewrites them the way a
person reads them aloud, before G2P. What misaki already reads well (plain numbers, ``$3.50``, ``50%``,
``1st``, ``&``, ``+``, years) is left to misaki.

Every rewrite remembers where it came from (:class:`~kokoro_endpoint.text.normalized_text.NormalizedText`), so
word timestamps can index what the client sent. The vocabulary (abbreviations, units, symbols, ...) is
data, in ``data/normalize.toml``; the patterns and the rules for when to read each form stay here.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable
from importlib import resources
from typing import Any, Final

from strands_voice_protocol.punctuation import CJK_CLAUSE_END, CLAUSE_END, SENTENCE_END

from kokoro_endpoint.text.normalized_text import NormalizedText, NormalizedTextBuilder

__all__ = ["normalize_for_speech"]


# --- vocabulary (data/normalize.toml) --------------------------------------------------------------


def _load_vocabulary() -> dict[str, Any]:
    data = resources.files("kokoro_endpoint").joinpath("data", "normalize.toml").read_text(encoding="utf-8")
    return tomllib.loads(data)


def _pairs(table: dict[str, list[str]]) -> dict[str, tuple[str, str]]:
    return {key: (one, many) for key, (one, many) in table.items()}


_VOCABULARY: Final = _load_vocabulary()
_DIGITS: Final[list[str]] = _VOCABULARY["digits"]
_ABBREVIATIONS: Final[dict[str, str]] = _VOCABULARY["abbreviations"]
_SENTENCE_ENDERS: Final = frozenset[str](_VOCABULARY["sentence_enders"])
_MONTHS: Final[dict[str, str]] = _VOCABULARY["months"]
_UNITS: Final = _pairs(_VOCABULARY["units"])
_TIGHT_UNITS: Final = _pairs(_VOCABULARY["tight_units"])
_MAGNITUDES: Final[dict[str, str]] = _VOCABULARY["magnitudes"]
_CURRENCY_NAMES: Final[dict[str, str]] = _VOCABULARY["currency_names"]
_FRACTION_DENOMINATORS: Final = {
    int(key): pair for key, pair in _pairs(_VOCABULARY["fraction_denominators"]).items()
}
_VULGAR_FRACTIONS: Final[dict[str, str]] = _VOCABULARY["vulgar_fractions"]
_SYMBOLS: Final[dict[str, str]] = _VOCABULARY["symbols"]
_ADDRESS_MARKS: Final[dict[str, str]] = _VOCABULARY["address_marks"]
_TEMPERATURE_SCALES: Final[dict[str, str]] = _VOCABULARY["temperature_scales"]
_TLDS: Final = "|".join(_VOCABULARY["tlds"])
# An address or a time never ends on a sentence or clause mark: that mark ends the sentence or clause.
_TRAILING_MARKS: Final = re.escape(SENTENCE_END + CLAUSE_END + CJK_CLAUSE_END)


def _one_of(keys: Iterable[str]) -> str:
    """A character class of ``keys`` (each one character)."""
    return "[" + re.escape("".join(keys)) + "]"


# --- helpers -----------------------------------------------------------------------------------------


def _digits(number: str) -> str:
    return " ".join(_DIGITS[int(c)] for c in number if c.isdigit())


def _is_one(number: str) -> bool:
    return number.lstrip("+-−") in {"1"}


def _unit_words(number: str, unit: tuple[str, str]) -> str:
    return unit[0] if _is_one(number) else unit[1]


def _spell_address(text: str) -> str:
    """Read a host name, path or mailbox name: ``.`` dot, ``/`` slash, ``-`` dash, ``_`` underscore."""
    spoken = "".join(f" {_ADDRESS_MARKS[c]} " if c in _ADDRESS_MARKS else c for c in text)
    return re.sub(r"\s+", " ", spoken).strip()


_SENTENCE_GOES_ON: Final = re.compile(r"\s*\Z|\s+[A-Z\"“]")


def _sentence_full_stop(text: str, end: int) -> str:
    """``"."`` when the abbreviation that ends at ``end`` also ends its sentence, else ``""``."""
    return "." if _SENTENCE_GOES_ON.match(text, end) else ""


# --- rules -------------------------------------------------------------------------------------------
# Each rule is a pattern and a function of (match, whole text) that returns the spoken form, or None to
# leave the match as written. All rules run in one left-to-right pass: at each position the first rule
# (in this order) that matches wins, and its output is not rewritten again.

_Rule = tuple[str, Callable[[re.Match[str], str], str | None]]


def _url(match: re.Match[str], _text: str) -> str:
    url = match.group(0)
    url = re.sub(r"^[a-z][a-z0-9+.-]*://", "", url, flags=re.IGNORECASE)
    host, _slash, path = url.partition("/")
    spoken_host = " w w w dot " + _spell_address(host[4:]) if host.lower().startswith("www.") else ""
    spoken = spoken_host.strip() or _spell_address(host)
    path = path.rstrip("/")
    if path:
        spoken += " slash " + _spell_address(path)
    return spoken


def _email(match: re.Match[str], _text: str) -> str:
    return f"{_spell_address(match.group('user'))} at {_spell_address(match.group('domain'))}"


def _phone(match: re.Match[str], _text: str) -> str | None:
    groups = [g for g in re.split(r"[^\d+]+", match.group(0)) if g]
    if sum(len(g.lstrip("+")) for g in groups) < 7:
        return None
    spoken = []
    for group in groups:
        prefix = "plus " if group.startswith("+") else ""
        spoken.append(prefix + _digits(group))
    return ", ".join(spoken)


def _money(match: re.Match[str], _text: str) -> str:
    number, magnitude = match.group("amount"), _MAGNITUDES[match.group("mag")]
    return f"{number} {magnitude} {_CURRENCY_NAMES[match.group('cur')]}"


def _time(match: re.Match[str], _text: str) -> str | None:
    hour, minute, half = match.group("hour"), match.group("minute"), match.group("half")
    if int(hour) > 24 or (minute is not None and int(minute) > 59):
        return None
    spoken = hour
    if minute is not None and minute != "00":
        spoken += f" oh {int(minute)}" if minute.startswith("0") else f" {minute}"
    elif minute == "00" and half is None:
        spoken += " hundred" if int(hour) > 12 or hour.startswith("0") else " o'clock"
    if half is not None:
        spoken += " AM" if half.lower() == "a" else " PM"
        if match.group(0).endswith("."):
            spoken += _sentence_full_stop(match.string, match.end())
    return spoken


def _temperature(match: re.Match[str], _text: str) -> str:
    number = match.group("num")
    sign = "minus " if number[0] in "-−" else ""
    number = number.lstrip("-−")
    scale = _TEMPERATURE_SCALES.get(match.group("scale") or "")
    degrees = "degree" if number == "1" else "degrees"
    return f"{sign}{number} {degrees}" + (f" {scale}" if scale else "")


def _unit(match: re.Match[str], _text: str) -> str:
    number, unit = match.group("num"), match.group("unit")
    return f"{number} {_unit_words(number, _UNITS[unit])}"


def _tight_unit(match: re.Match[str], _text: str) -> str:
    number, unit = match.group("num"), match.group("unit")
    return f"{number} {_unit_words(number, _TIGHT_UNITS[unit])}"


def _range(match: re.Match[str], _text: str) -> str:
    return f"{match.group(1)} to"


def _fraction(match: re.Match[str], _text: str) -> str | None:
    numerator, denominator = int(match.group(1)), int(match.group(2))
    if (numerator, denominator) == (24, 7):
        return "twenty-four seven"
    if numerator >= denominator or denominator not in _FRACTION_DENOMINATORS:
        return None
    one, many = _FRACTION_DENOMINATORS[denominator]
    return f"{match.group(1)} {one if numerator == 1 else many}"


def _abbreviation(match: re.Match[str], text: str) -> str:
    written = match.group(0)
    spoken = _ABBREVIATIONS.get(written) or _ABBREVIATIONS[written[0].lower() + written[1:]]
    if written in _SENTENCE_ENDERS:
        spoken += _sentence_full_stop(text, match.end())
    return spoken


def _doctor_or_drive(match: re.Match[str], text: str) -> str:
    # "Dr. Lee" is a doctor; "Mulholland Dr." is a drive.
    before = text[max(0, match.start() - 40) : match.start()].rstrip()
    if re.search(r"[A-Z][a-z]+$", before) and not re.compile(r"\s+[A-Z]").match(text, match.end()):
        return "Drive" + _sentence_full_stop(text, match.end())
    return "Doctor"


def _saint_or_street(match: re.Match[str], text: str) -> str:
    # "St. Louis" is a saint; "Main St." and "5th St." are streets.
    before = text[max(0, match.start() - 40) : match.start()].rstrip()
    if re.search(r"([A-Z][a-z]+|\d+(st|nd|rd|th))$", before) and not re.compile(r"\s+[A-Z]").match(
        text, match.end()
    ):
        return "Street" + _sentence_full_stop(text, match.end())
    return "Saint"


def _number_sign(_match: re.Match[str], _text: str) -> str:
    return "number"


def _month(match: re.Match[str], _text: str) -> str:
    return _MONTHS[match.group(0)]


def _meridiem(match: re.Match[str], text: str) -> str:
    spoken = "AM" if match.group(0)[0].lower() == "a" else "PM"
    return spoken + _sentence_full_stop(text, match.end())


def _dimensions(match: re.Match[str], _text: str) -> str:
    return f"{match.group(1)} by {match.group(2)}"


def _multiplier(match: re.Match[str], _text: str) -> str:
    return f"{match.group(1)} times"


def _symbol(match: re.Match[str], _text: str) -> str:
    return _SYMBOLS[match.group(0)]


def _handle(match: re.Match[str], _text: str) -> str:
    return f"at {match.group(1)}"


def _hashtag_number(match: re.Match[str], _text: str) -> str:
    return f"number {match.group(1)}"


def _vulgar(match: re.Match[str], _text: str) -> str:
    fraction = _VULGAR_FRACTIONS[match.group(2)]
    return f"{match.group(1)} and {fraction}" if match.group(1) else fraction


def _abbreviation_pattern() -> str:
    keys = sorted(_ABBREVIATIONS, key=len, reverse=True)
    alternatives = []
    for key in keys:
        escaped = re.escape(key)
        if key[0].islower():
            escaped = f"[{key[0]}{key[0].upper()}]" + re.escape(key[1:])
        alternatives.append(escaped)
    # Not inside a word or an address ("vs" in "canvas"; an address is consumed before this rule).
    return rf"(?<![\w.@/])(?:{'|'.join(alternatives)})(?![\w@])"


_NUM: Final = r"\d+(?:,\d{3})*(?:\.\d+)?"
_UNIT_ALT: Final = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
_TIGHT_ALT: Final = "|".join(re.escape(u) for u in sorted(_TIGHT_UNITS, key=len, reverse=True))
_MAG_ALT: Final = "|".join(sorted(_MAGNITUDES, key=len, reverse=True))

_RULES: Final[list[_Rule]] = [
    (
        rf"(?<![\w@])(?:[a-z][a-z0-9+.-]*://|www\.)[^\s<>\"']+[^\s<>\"'){_TRAILING_MARKS}\]]",
        _url,
    ),
    (r"(?<![\w.+-])(?P<user>[\w.+-]+)@(?P<domain>[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,})", _email),
    (
        rf"(?<![\w@.-])[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:{_TLDS})(?:/[^\s<>\"']*[^\s<>\"'){_TRAILING_MARKS}\]])?(?![\w@])",
        _url,
    ),
    (
        r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?|\d{2,4}[ .-])\d{3,4}[ .-]\d{3,4}(?![\w-])",
        _phone,
    ),
    (rf"(?P<cur>{_one_of(_CURRENCY_NAMES)})(?P<amount>{_NUM})\s?(?P<mag>{_MAG_ALT})(?![\w])", _money),
    (
        r"(?<![\w:.])(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s?(?:(?P<half>[aApP])\.?[mM]\.?(?![\w])|(?<=:\d\d)(?![\d:]))",
        _time,
    ),
    (r"(?<![\w])(?P<num>[-−]?\d+(?:\.\d+)?)\s?°\s?(?P<scale>[CFK](?![\w]))?", _temperature),
    (rf"(?<![\w])(?:(\d+)\s?)?({_one_of(_VULGAR_FRACTIONS)})", _vulgar),
    (rf"(?<![\w.])(?P<num>-?{_NUM})\s?(?P<unit>{_UNIT_ALT})(?![\w/])", _unit),
    (rf"(?<![\w.])(?P<num>-?{_NUM})(?P<unit>{_TIGHT_ALT})(?![\w/])", _tight_unit),
    # Only "3–" is rewritten ("3 to"), so the second number stays free for its unit ("3–5 km").
    (r"(?<![\w.,/:-])(\d+(?:\.\d+)?)\s?(?:–|—|-)\s?(?=\d+(?:\.\d+)?(?![\d/:-]|[.,]\d))", _range),
    (r"(?<![\w./])(\d{1,2})/(\d{1,2})(?![\w/]|\.\d)", _fraction),
    (r"(?<![\w.])(\d{2,5})\s?[x×]\s?(\d{2,5})(?![\w])", _dimensions),
    (r"(?<![\w.])(\d+(?:\.\d+)?)[x×](?![\w])", _multiplier),
    (_abbreviation_pattern(), _abbreviation),
    (r"(?<![\w.])Dr\.", _doctor_or_drive),
    (r"(?<![\w.])St\.", _saint_or_street),
    (r"(?<![\w.])No\.(?=\s?\d)", _number_sign),
    (r"(?<![\w@#])#(\d+)(?![\w])", _hashtag_number),
    (r"(?<![\w.])(?:" + "|".join(re.escape(m) for m in _MONTHS) + r")(?=\s?\d)", _month),
    (r"(?<![\w.])[aApP]\.[mM]\.", _meridiem),
    (r"(?<![\w.@])@([A-Za-z_]\w*)", _handle),
    (_one_of(symbol for symbol in _SYMBOLS if symbol != "~") + r"|(?<!\S)~(?=\d)", _symbol),
]

_COMPILED: Final = [re.compile(pattern) for pattern, _ in _RULES]


def _next_match(index: int, text: str, start: int) -> re.Match[str] | None:
    """Rule ``index``'s next match at or after ``start`` that it rewrites (empty matches never)."""
    pattern, handler = _COMPILED[index], _RULES[index][1]
    while start <= len(text):
        match = pattern.search(text, start)
        if match is None:
            return None
        if match.end() > match.start() and handler(match, text) is not None:
            return match
        start = match.start() + 1
    return None


def normalize_for_speech(text: str) -> NormalizedText:
    """Rewrite written-English forms the way they are read aloud, keeping a map to the original.

    Args:
        text: Any text.

    Returns:
        The spoken text and its char map (never raises; text with nothing to rewrite comes back as is).
    """
    spoken_text = NormalizedTextBuilder(text)
    upcoming = [_next_match(i, text, 0) for i in range(len(_RULES))]
    while True:
        found = [(m.start(), i, m) for i, m in enumerate(upcoming) if m is not None]
        if not found:
            break
        begin, index, match = min(found, key=lambda item: (item[0], item[1]))
        spoken = str(_RULES[index][1](match, text)).strip()
        spoken_text.keep(begin)
        # A word read out must not glue itself to its neighbours ("x=5" → "x equals 5").
        if begin > 0 and text[begin - 1].isalnum() and spoken[:1].isalnum():
            spoken = " " + spoken
        if match.end() < len(text) and text[match.end()].isalnum() and spoken[-1:].isalnum():
            spoken += " "
        spoken_text.replace(match.end(), spoken)
        upcoming = [
            m
            if m is None or m.start() >= spoken_text.position
            else _next_match(i, text, spoken_text.position)
            for i, m in enumerate(upcoming)
        ]
    return spoken_text.build()
