"""English text normalization for speech (pure functions): write out what people say, keep a char map.

An LLM writes ``e.g.``, ``approx.``, ``$1.5M``, ``5 km``, ``10:30am``, ``3–5`` or ``jane.doe@example.com``;
misaki reads those letter by letter or not at all. :func:`normalize_for_speech` rewrites them the way a
person reads them aloud, before G2P. What misaki already reads well (plain numbers, ``$3.50``, ``50%``,
``1st``, ``&``, ``+``, years) is left to misaki.

Every rewrite remembers where it came from: :class:`NormalizedText` maps any span of the spoken text back
to the span of the ORIGINAL text it was made from, so word timestamps can index what the client sent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = ["NormalizedText", "identity", "normalize_for_speech"]


@dataclass(frozen=True, slots=True)
class NormalizedText:
    """Spoken text plus, for each of its characters, the span of the original text it came from.

    Attributes:
        original: The text as the client sent it.
        text: The text to speak.
        starts: ``starts[i]`` is where the original span behind ``text[i]`` starts.
        ends: ``ends[i]`` is where that span ends (exclusive).
    """

    original: str
    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """The original span that the spoken span ``text[start:end]`` was made from.

        Args:
            start: Start index into :attr:`text`.
            end: End index (exclusive), greater than ``start``.

        Returns:
            ``(char_start, char_end)`` into :attr:`original`.
        """
        if not 0 <= start < end <= len(self.text):
            raise ValueError("span outside the spoken text")
        return min(self.starts[start:end]), max(self.ends[start:end])


def identity(text: str) -> NormalizedText:
    """The text spoken as written (``"normalize": false``), with the one-to-one char map."""
    return NormalizedText(text, text, tuple(range(len(text))), tuple(range(1, len(text) + 1)))


# --- vocabulary ------------------------------------------------------------------------------------

_DIGITS: Final = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

# Abbreviations that mean one thing wherever they stand (matched with their dots, case-sensitive
# unless listed lower-case, where the capitalised form is accepted too).
_ABBREVIATIONS: Final = {
    "e.g.": "for example",
    "eg.": "for example",
    "i.e.": "that is",
    "ie.": "that is",
    "etc.": "et cetera",
    "vs.": "versus",
    "vs": "versus",
    "approx.": "approximately",
    "cf.": "compare",
    "incl.": "including",
    "esp.": "especially",
    "Mr.": "Mister",
    "Mrs.": "Missus",
    "Ms.": "Miz",
    "Prof.": "Professor",
    "Jr.": "Junior",
    "Sr.": "Senior",
    "Mt.": "Mount",
    "Ave.": "Avenue",
    "Blvd.": "Boulevard",
    "Rd.": "Road",
    "Dept.": "Department",
    "Inc.": "Incorporated",
    "Ltd.": "Limited",
    "Corp.": "Corporation",
    "Govt.": "Government",
    "YoY": "year over year",
    "QoQ": "quarter over quarter",
    "w/o": "without",
    "w/": "with",
}
# These may end a sentence; the spoken form then keeps the full stop.
_SENTENCE_ENDERS: Final = frozenset({"etc.", "Inc.", "Ltd.", "Corp.", "Jr.", "Sr.", "Ave.", "Blvd.", "Rd."})

_MONTHS: Final = {
    "Jan.": "January",
    "Feb.": "February",
    "Mar.": "March",
    "Apr.": "April",
    "Aug.": "August",
    "Sep.": "September",
    "Sept.": "September",
    "Oct.": "October",
    "Nov.": "November",
    "Dec.": "December",
}

# unit → (singular, plural). Read only right after a number.
_UNITS: Final = {
    "km/h": ("kilometer per hour", "kilometers per hour"),
    "m/s": ("meter per second", "meters per second"),
    "mph": ("mile per hour", "miles per hour"),
    "kph": ("kilometer per hour", "kilometers per hour"),
    "km": ("kilometer", "kilometers"),
    "cm": ("centimeter", "centimeters"),
    "mm": ("millimeter", "millimeters"),
    "nm": ("nanometer", "nanometers"),
    "kg": ("kilogram", "kilograms"),
    "mg": ("milligram", "milligrams"),
    "lbs": ("pound", "pounds"),
    "lb": ("pound", "pounds"),
    "oz": ("ounce", "ounces"),
    "ft": ("foot", "feet"),
    "mi": ("mile", "miles"),
    "yd": ("yard", "yards"),
    "ml": ("milliliter", "milliliters"),
    "mL": ("milliliter", "milliliters"),
    "kWh": ("kilowatt hour", "kilowatt hours"),
    "kW": ("kilowatt", "kilowatts"),
    "MW": ("megawatt", "megawatts"),
    "GHz": ("gigahertz", "gigahertz"),
    "MHz": ("megahertz", "megahertz"),
    "kHz": ("kilohertz", "kilohertz"),
    "Hz": ("hertz", "hertz"),
    "TB": ("terabyte", "terabytes"),
    "GB": ("gigabyte", "gigabytes"),
    "MB": ("megabyte", "megabytes"),
    "KB": ("kilobyte", "kilobytes"),
    "kB": ("kilobyte", "kilobytes"),
    "ms": ("millisecond", "milliseconds"),
    "sec": ("second", "seconds"),
    "secs": ("second", "seconds"),
    "min": ("minute", "minutes"),
    "mins": ("minute", "minutes"),
    "hr": ("hour", "hours"),
    "hrs": ("hour", "hours"),
    "kcal": ("kilocalorie", "kilocalories"),
    "cal": ("calorie", "calories"),
}
# Units too short or too common as words to read after a spaced number ("5 in the box", "5 m away" is
# fine but "I am 5 g..." is rare): read only when written right against the number ("5in", "10m").
_TIGHT_UNITS: Final = {
    "m": ("meter", "meters"),
    "g": ("gram", "grams"),
    "in": ("inch", "inches"),
    "h": ("hour", "hours"),
    "L": ("liter", "liters"),
    "l": ("liter", "liters"),
    "V": ("volt", "volts"),
    "W": ("watt", "watts"),
}

_MAGNITUDES: Final = {
    "k": "thousand",
    "K": "thousand",
    "thousand": "thousand",
    "m": "million",
    "M": "million",
    "mn": "million",
    "million": "million",
    "b": "billion",
    "B": "billion",
    "bn": "billion",
    "billion": "billion",
    "t": "trillion",
    "T": "trillion",
    "tn": "trillion",
    "trillion": "trillion",
}
_CURRENCY_NAMES: Final = {"$": "dollars", "€": "euros", "£": "pounds", "¥": "yen", "₹": "rupees"}

_FRACTION_DENOMINATORS: Final = {
    2: ("half", "halves"),
    3: ("third", "thirds"),
    4: ("quarter", "quarters"),
    5: ("fifth", "fifths"),
    6: ("sixth", "sixths"),
    7: ("seventh", "sevenths"),
    8: ("eighth", "eighths"),
    9: ("ninth", "ninths"),
    10: ("tenth", "tenths"),
}
_VULGAR_FRACTIONS: Final = {
    "½": "one half",
    "⅓": "one third",
    "⅔": "two thirds",
    "¼": "one quarter",
    "¾": "three quarters",
    "⅕": "one fifth",
    "⅛": "one eighth",
}
_SYMBOLS: Final = {
    "=": "equals",
    "≈": "approximately",
    "±": "plus or minus",
    "×": "times",
    "÷": "divided by",
    "≤": "less than or equal to",
    "≥": "greater than or equal to",
    "≠": "is not equal to",
    "→": "to",
    "~": "about",
}
_TLDS: Final = (
    "com|org|net|edu|gov|io|ai|dev|app|co|uk|de|fr|us|ca|au|info|biz|me|tv|ly|gg|so|sh|xyz|tech|cloud"
)

# --- helpers -----------------------------------------------------------------------------------------


def _digits(number: str) -> str:
    return " ".join(_DIGITS[int(c)] for c in number if c.isdigit())


def _is_one(number: str) -> bool:
    return number.lstrip("+-−") in {"1"}


def _unit_words(number: str, unit: tuple[str, str]) -> str:
    return unit[0] if _is_one(number) else unit[1]


def _spell_address(text: str) -> str:
    """Read a host name, path or mailbox name: ``.`` dot, ``/`` slash, ``-`` dash, ``_`` underscore."""
    names = {".": " dot ", "/": " slash ", "-": " dash ", "_": " underscore ", ":": " colon ", "~": " tilde "}
    names |= {"?": " question mark ", "=": " equals ", "&": " and ", "#": " hash ", "+": " plus "}
    names |= {"%": " percent "}
    spoken = "".join(names.get(c, c) for c in text)
    return re.sub(r"\s+", " ", spoken).strip()


_SENTENCE_GOES_ON: Final = re.compile(r"\s*\Z|\s+[A-Z\"“]")


def _sentence_full_stop(text: str, end: int) -> str:
    """``"."`` when the abbreviation that ends at ``end`` also ends its sentence, else ``""``."""
    return "." if _SENTENCE_GOES_ON.match(text, end) else ""


# --- rules -------------------------------------------------------------------------------------------
# Each rule is a pattern and a function of (match, whole text) that returns the spoken form, or None to
# leave the match as written. All rules run in one left-to-right pass: at each position the first rule
# (in this order) that matches wins, and its output is not rewritten again.

_Rule = tuple[str, Callable[[re.Match[str], str], str | None] | None]


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
    scale = {"C": " Celsius", "F": " Fahrenheit", "K": " Kelvin"}.get(match.group("scale") or "", "")
    degrees = "degree" if number == "1" else "degrees"
    return f"{sign}{number} {degrees}{scale}"


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
        r"(?<![\w@])(?:[a-z][a-z0-9+.-]*://|www\.)[^\s<>\"']+[^\s<>\"'.,;:!?)\]]",
        _url,
    ),
    (r"(?<![\w.+-])(?P<user>[\w.+-]+)@(?P<domain>[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,})", _email),
    (
        rf"(?<![\w@.-])[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:{_TLDS})(?:/[^\s<>\"']*[^\s<>\"'.,;:!?)\]])?(?![\w@])",
        _url,
    ),
    (
        r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?|\d{2,4}[ .-])\d{3,4}[ .-]\d{3,4}(?![\w-])",
        _phone,
    ),
    (rf"(?P<cur>[$€£¥₹])(?P<amount>{_NUM})\s?(?P<mag>{_MAG_ALT})(?![\w])", _money),
    (
        r"(?<![\w:.])(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s?(?:(?P<half>[aApP])\.?[mM]\.?(?![\w])|(?<=:\d\d)(?![\d:]))",
        _time,
    ),
    (r"(?<![\w])(?P<num>[-−]?\d+(?:\.\d+)?)\s?°\s?(?P<scale>[CFK](?![\w]))?", _temperature),
    (r"(?<![\w])(?:(\d+)\s?)?([½⅓⅔¼¾⅕⅛])", None),
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
    (r"[=≈±×÷≤≥≠→]|(?<!\S)~(?=\d)", _symbol),
]


def _vulgar(match: re.Match[str], _text: str) -> str:
    fraction = _VULGAR_FRACTIONS[match.group(2)]
    return f"{match.group(1)} and {fraction}" if match.group(1) else fraction


_RULES[7] = (_RULES[7][0], _vulgar)
_COMPILED: Final = [re.compile(pattern) for pattern, _ in _RULES]


def _next_match(index: int, text: str, start: int) -> re.Match[str] | None:
    """Rule ``index``'s next match at or after ``start`` that it rewrites (empty matches never)."""
    pattern, handler = _COMPILED[index], _RULES[index][1]
    while start <= len(text):
        match = pattern.search(text, start)
        if match is None:
            return None
        if match.end() > match.start() and handler is not None and handler(match, text) is not None:
            return match
        start = match.start() + 1
    return None


def _replace(
    text: str, begin: int, end: int, spoken: str, pieces: list[str], starts: list[int], ends: list[int]
) -> None:
    """Append ``spoken`` for ``text[begin:end]``: what both share at their ends maps char by char
    ("40 km" → "40 kilometers" keeps "40" on "40"), the rest maps to the rest as a whole."""
    written = text[begin:end]
    head = 0
    while head < min(len(written), len(spoken)) - 1 and written[head] == spoken[head]:
        head += 1
    tail = 0
    while tail < min(len(written), len(spoken)) - head - 1 and written[-1 - tail] == spoken[-1 - tail]:
        tail += 1
    middle = spoken[head : len(spoken) - tail]
    pieces.append(spoken)
    starts.extend(range(begin, begin + head))
    ends.extend(range(begin + 1, begin + head + 1))
    starts.extend([begin + head] * len(middle))
    ends.extend([end - tail] * len(middle))
    starts.extend(range(end - tail, end))
    ends.extend(range(end - tail + 1, end + 1))


def normalize_for_speech(text: str) -> NormalizedText:
    """Rewrite written-English forms the way they are read aloud, keeping a map to the original.

    Args:
        text: Any text.

    Returns:
        The spoken text and its char map (never raises; text with nothing to rewrite comes back as is).
    """
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    position = 0

    def keep(upto: int) -> None:
        nonlocal position
        if upto > position:
            pieces.append(text[position:upto])
            starts.extend(range(position, upto))
            ends.extend(range(position + 1, upto + 1))
            position = upto

    upcoming = [_next_match(i, text, 0) for i in range(len(_RULES))]
    while True:
        found = [(m.start(), i, m) for i, m in enumerate(upcoming) if m is not None]
        if not found:
            break
        begin, index, match = min(found, key=lambda item: (item[0], item[1]))
        handler = _RULES[index][1]
        assert handler is not None
        spoken = str(handler(match, text)).strip()
        keep(begin)
        # A word read out must not glue itself to its neighbours ("x=5" → "x equals 5").
        if begin > 0 and text[begin - 1].isalnum() and spoken[:1].isalnum():
            spoken = " " + spoken
        if match.end() < len(text) and text[match.end()].isalnum() and spoken[-1:].isalnum():
            spoken += " "
        _replace(text, begin, match.end(), spoken, pieces, starts, ends)
        position = match.end()
        upcoming = [
            m if m is None or m.start() >= position else _next_match(i, text, position)
            for i, m in enumerate(upcoming)
        ]
    keep(len(text))
    return NormalizedText(text, "".join(pieces), tuple(starts), tuple(ends))
