"""Parsers of config values as Apache Hudi writes them (strings from a properties file or the
command line) and as a scenario's YAML does (typed). Each raises ``ValueError`` saying what it
expected; the caller names the key."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Parser = Callable[[Any], Any]


def integer(v: Any) -> int:
    """An int; Hudi's strings may be written as a float (``1e8``)."""
    if isinstance(v, bool):
        raise ValueError(f"expected a number, got {v!r}")
    return int(float(v)) if isinstance(v, str) else int(v)


def non_negative(v: Any) -> int:
    n = integer(v)
    if n < 0:
        raise ValueError(f"expected a number >= 0, got {v!r}")
    return n


def positive(v: Any) -> int:
    n = integer(v)
    if n < 1:
        raise ValueError(f"expected a number >= 1, got {v!r}")
    return n


def at_least(lowest: int, why: str = "") -> Parser:
    """An int of at least ``lowest`` (``why`` says what a smaller one would mean)."""

    def parse(v: Any) -> int:
        n = integer(v)
        if n < lowest:
            raise ValueError(f"expected a number >= {lowest}{f' ({why})' if why else ''}, got {v!r}")
        return n

    return parse


def fraction(v: Any) -> float:
    """A number strictly between 0 and 1 (a rate, such as a bloom filter's false-positive rate)."""
    x = number(v)
    if not 0 < x < 1:
        raise ValueError(f"expected a number in (0, 1), got {v!r}")
    return x


def optional_positive(v: Any) -> int | None:
    return None if v is None else positive(v)


def number(v: Any) -> float:
    if isinstance(v, bool):
        raise ValueError(f"expected a number, got {v!r}")
    return float(v)


def boolean(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if str(v).lower() not in ("true", "false"):
        raise ValueError(f"expected true or false, got {v!r}")
    return str(v).lower() == "true"


def columns(v: Any) -> tuple[str, ...]:
    """A column list: a YAML list or Hudi's comma-separated string."""
    items = v if isinstance(v, list | tuple) else str(v).split(",")
    return tuple(str(c).strip() for c in items if str(c).strip())


def optional_columns(v: Any) -> tuple[str, ...] | None:
    return None if v is None else columns(v)


def text(v: Any) -> str:
    return str(v)


def optional_text(v: Any) -> str | None:
    return None if v is None else str(v)


def choice(*names: str, fold: Callable[[str], str] = str, aliases: dict[str, str] | None = None,
           optional: bool = False) -> Parser:
    """One of ``names``, compared after ``fold`` (``str.lower`` for a Hudi key: Hudi's values are
    case-insensitive; ours are exact); ``aliases``
    maps another spelling (folded) to one of ours. None passes when ``optional``."""
    table = {fold(n): n for n in names} | {fold(a): n for a, n in (aliases or {}).items()}

    def parse(v: Any) -> str | None:
        if v is None and optional:
            return None
        got = table.get(fold(str(v)))
        if got is None:
            raise ValueError(f"expected one of {list(names)}, got {v!r}")
        return got

    parse.choices = tuple(names)  # type: ignore[attr-defined]  # for the docs table
    return parse


def class_or_short(pairs: Sequence[tuple[str, str]]) -> Parser:
    """Our short name, from itself or from Hudi's class name (fully qualified or not)."""

    def parse(v: Any) -> str:
        name = str(v).rsplit(".", 1)[-1].lower()
        for short, cls in pairs:
            if name in (short, cls.lower()):
                return short
        raise ValueError(f"expected one of {[cls for _, cls in pairs]}, got {v!r}")

    parse.choices = tuple(cls for _, cls in pairs)  # type: ignore[attr-defined]
    return parse


def zero_only(why: str) -> Parser:
    """A key a design fixes at 0; anything else is refused with ``why``."""

    def parse(v: Any) -> int:
        if integer(v) != 0:
            raise ValueError(f"{why}; got {v!r}")
        return 0

    parse.choices = ("0",)  # type: ignore[attr-defined]
    return parse


def refused(why: str) -> Parser:
    """A key Hudi has that an engine of ours cannot honour: any value is refused with ``why``."""

    def parse(v: Any) -> Any:
        raise ValueError(why)

    parse.refused = why  # type: ignore[attr-defined]
    return parse


def fixed(value: str, why: str, fold: Callable[[str], str] = str.lower) -> Parser:
    """A key whose only value is ``value`` (``fold`` compares spellings); any other is refused with ``why``."""

    def parse(v: Any) -> str:
        if fold(str(v)) != fold(value):
            raise ValueError(f"{why}; got {v!r}")
        return value

    parse.choices = (value,)  # type: ignore[attr-defined]
    return parse


def implemented_class(full_names: Sequence[str], why: str) -> Parser:
    """One of the Java classes ``full_names``, written fully qualified or by its simple name;
    another class (or the same simple name in another package) is refused with ``why``."""
    accepted = {n: n for n in full_names} | {n.rsplit(".", 1)[-1]: n for n in full_names}

    def parse(v: Any) -> str:
        got = accepted.get(str(v).strip())
        if got is None:
            raise ValueError(f"{why}; got {v!r}")
        return got

    parse.choices = tuple(full_names)  # type: ignore[attr-defined]
    return parse
