"""One config language: an engine's config keys — our shorthands, their ``*_mb`` forms and Apache
Hudi's ``hoodie.*`` keys — read through the registry (:mod:`engines.config.registry`), which holds
each key once with its parser.

The same reading configures a scenario's engines (:mod:`bench.engine_factory`), is what
``layoutbench validate`` checks (:mod:`bench.scenario`) and configures ``layoutbench service
--hoodie-conf``, so a Hudi config table (the clustering article's) pasted into a scenario drives
our engines and real Hudi alike. Refused, each in one message naming the key: a key the engine's
kind does not take (with the nearest known key when one is close), a value its parser refuses, a
field set twice (by a shorthand and its ``hoodie.*`` key, or by a size and its ``*_mb`` form).
Real Hudi (kind ``hudi``) takes every ``hoodie.*`` key of the registry, passed through unchanged;
any other is taken for a misspelling. Pure: no Spark.

Keys that say *when* table services run (``hoodie.clustering.inline``, ``.schedule.inline``,
``.async.enabled``, ``.inline.max.commits``, ``.async.max.commits``) are the scenario's
``maintenance`` section in our harness, which schedules every engine alike: in a scenario they
are accepted when they agree with it and refused, naming both, when they do not.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from engines.config import registry as reg
from engines.config.parsers import boolean, integer, number
from engines.config.registry import HUDI, MB, Setting
from engines.kinds import KINDS


class HoodieConfError(ValueError):
    """A config key or value an engine cannot honour; the message names it."""


# When services run: the scenario's maintenance section (mode the key turns on, or None for a count).
SCHEDULE_KEYS: dict[str, str | None] = {
    s.hudi: (None if s.maintenance == "commits" else s.maintenance) for s in reg.SETTINGS
    if s.maintenance and s.hudi}


def is_hoodie(key: str) -> bool:
    return key.startswith("hoodie.")


def split_hoodie(config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the ``hoodie.*`` keys of ``config``, the rest: our own shorthands)."""
    return ({k: v for k, v in config.items() if is_hoodie(k)}, {k: v for k, v in config.items() if not is_hoodie(k)})


def known_keys(kind: str) -> list[str]:
    """The ``hoodie.*`` keys ``kind`` honours."""
    return sorted(k for k, entries in reg.hudi_keys(settings_kind(kind)).items()
                  if not any(hasattr(s.parse, "refused") or s.maintenance for s in entries))


def _nearest(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _parse(s: Setting, key: str, value: Any, prefix: str) -> Any:
    try:
        return s.parse(value)
    except (TypeError, ValueError) as exc:
        raise HoodieConfError(f"{prefix}{key}={value}: {exc}") from None


def translate(kind: str, conf: Mapping[str, Any], where: str = "",
              schedule: tuple[str, int] | None = None) -> dict[str, Any]:
    """``conf``'s ``hoodie.*`` keys as ``{config field: parsed value}`` for one of our kinds.

    ``schedule`` is the scenario's (maintenance mode, every_commits): the scheduling keys must agree
    with it; without it (the service, whose --mode decides) they are refused like any key we do
    not implement. Raises :class:`HoodieConfError` naming the first bad key."""
    prefix = f"{where}: " if where else ""
    entry = KINDS.get(kind)
    if entry is None or entry.settings is None:
        raise HoodieConfError(f"{prefix}engine kind {kind!r} takes no hoodie.* keys")
    keys = reg.hudi_keys(entry.settings)
    fields: dict[str, Any] = {}
    for key, value in conf.items():
        entries = keys.get(key, [])
        if entries and entries[0].maintenance:
            if schedule is not None:
                _check_schedule(key, value, schedule, prefix)
                continue
            entries = []
        why = next((s.parse.refused for s in entries if hasattr(s.parse, "refused")), None)  # type: ignore[attr-defined]
        if not entries or why:
            known = known_keys(kind)
            raise HoodieConfError(f"{prefix}{key}: not a key our {kind} engine implements"
                                  + (f" ({why})" if why else _nearest(key, known)) + f"; known: {', '.join(known)}")
        for s in entries:
            parsed = _parse(s, key, value, prefix)
            if s.name is not None:
                fields[s.name] = parsed
    return fields


def read_config(kind: str, config: Mapping[str, Any], where: str = "",
                schedule: tuple[str, int] | None = None) -> dict[str, Any]:
    """An engine's config (shorthands, ``*_mb`` sizes, ``hoodie.*`` keys) as ``{field: value}``,
    every value through its parser. For ``hudi`` the ``hoodie.*`` keys (top level and ``options``)
    are checked and kept unchanged in ``options``. Raises :class:`HoodieConfError` naming the key."""
    prefix = f"{where}: " if where else ""
    hoodie, own = split_hoodie(config)
    passes_through = _passes_hoodie_through(kind)
    options = own.pop("options", None) if passes_through else None
    shorthands = reg.for_kind(settings_kind(kind))
    sizes_mb = {s.mb_name: s for s in shorthands.values() if s.mb_name}
    fields: dict[str, Any] = {}
    source: dict[str, str] = {}
    for key, value in own.items():
        if key in shorthands:
            s = shorthands[key]
            parsed = _parse(s, key, value, prefix)
        elif key in sizes_mb:
            s = sizes_mb[key]
            try:
                parsed = int(number(value) * MB)
            except (TypeError, ValueError) as exc:
                raise HoodieConfError(f"{prefix}{key}={value}: {exc}") from None
        else:
            allowed = sorted([*shorthands, *sizes_mb] + (["options"] if passes_through else []))
            raise HoodieConfError(f"{prefix}{key}: not a config key of engine kind {kind!r}"
                                  f"{_nearest(key, allowed)}; allowed: {', '.join(allowed)} and hoodie.* keys")
        name = s.name or key
        if name in fields:
            raise HoodieConfError(f"{prefix}{name} set twice, by {source[name]} and by {key}; keep one")
        fields[name], source[name] = parsed, key
    if passes_through:
        passed = _hudi_options(hoodie, options, prefix)
        both = sorted(n for n in fields if shorthands[n].hudi in passed)
        if both:
            raise HoodieConfError(f"{prefix}{both} set both by a hoodie.* key and by its shorthand; keep one")
        return {**fields, "options": passed} if passed or options is not None else fields
    if hoodie:
        from_keys = translate(kind, hoodie, where, schedule)
        both = sorted(set(from_keys) & set(fields))
        if both:
            raise HoodieConfError(f"{prefix}{both} set both by a hoodie.* key and by its shorthand; keep one")
        fields.update(from_keys)
    return fields


def settings_kind(kind: str) -> str:
    """The config registry's kind whose keys engine kind ``kind`` reads (its registry entry's
    ``settings``; a kind without one, its own name)."""
    entry = KINDS.get(kind)
    return entry.settings if entry is not None and entry.settings else kind


def _passes_hoodie_through(kind: str) -> bool:
    """Whether ``kind`` is Apache Hudi itself, which takes ``hoodie.*`` keys unchanged."""
    entry = KINDS.get(kind)
    return entry is not None and entry.builder == "hudi"


def _hudi_options(hoodie: dict[str, Any], options: Any, prefix: str) -> dict[str, Any]:
    """Real Hudi's pass-through keys (top level, then ``options``, which win), each checked: a key
    the registry does not list is taken for a misspelling, a value its parser refuses is refused."""
    if options is not None and not isinstance(options, dict):
        raise HoodieConfError(f"{prefix}options: a map of hoodie.* keys to values, got {options!r}")
    passed = {**hoodie, **(options or {})}
    known = reg.hudi_keys(HUDI)
    for key, value in passed.items():
        if not is_hoodie(str(key)):
            raise HoodieConfError(f"{prefix}options.{key}: options may hold only hoodie.* keys "
                                  "(passed to Apache Hudi unchanged)")
        if key not in known:
            raise HoodieConfError(f"{prefix}{key}: not a Hudi key this harness knows{_nearest(key, sorted(known))}; "
                                  "a key real Hudi reads is one entry in engines/config/registry.py")
        _parse(hudi_entry(key), key, value, prefix)
    return passed


def hudi_entry(key: str) -> Setting:
    """The entry whose parser checks ``key`` for real Hudi: the hudi kind's own, else a field's."""
    entries = reg.hudi_keys(HUDI)[key]
    return next((s for s in entries if HUDI in s.kinds), next((s for s in entries if s.name), entries[0]))


def hudi_bloom(config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``bloom_*`` fields real Hudi's config sets (shorthands, or ``hoodie.*`` keys at the top
    level or in ``options``)."""
    fields = read_config(HUDI, config)
    out = {k: v for k, v in fields.items() if k in reg.BLOOM}
    for key, value in fields.get("options", {}).items():
        s = hudi_entry(key)
        if s.name in reg.BLOOM:
            out[s.name] = s.parse(value)
    return out


def _check_schedule(key: str, value: Any, schedule: tuple[str, int], prefix: str) -> None:
    mode, every = schedule
    try:
        if SCHEDULE_KEYS[key] is not None:
            on = boolean(value)
            if on != (mode == SCHEDULE_KEYS[key]):
                raise HoodieConfError(f"{prefix}{key}={value} disagrees with the scenario's maintenance.mode "
                                      f"{mode!r} (the maintenance section schedules every engine)")
            return
        n = integer(value)
    except ValueError as exc:
        if isinstance(exc, HoodieConfError):
            raise
        raise HoodieConfError(f"{prefix}{key}={value}: {exc}") from None
    if key == "hoodie.clustering.inline.max.commits" and mode == "inline" and n != every:
        raise HoodieConfError(f"{prefix}{key}={value} disagrees with the scenario's maintenance.every_commits "
                              f"{every} (the maintenance section schedules every engine)")
    if key == "hoodie.clustering.async.max.commits" and mode == "async":
        raise HoodieConfError(f"{prefix}{key}: the harness's async service runs every "
                              "maintenance.async_interval_s, not after a number of commits")


def clustering_job_gates(conf: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    """For ``service --design clustering`` (HoodieClusteringJob): the scheduling keys as the gates
    Hudi's ``ClusteringPlanActionExecutor`` applies to a schedule — with ``hoodie.clustering.inline``
    or ``.async.enabled`` true, no plan until that many commits (``.inline.max.commits`` /
    ``.async.max.commits``, default 4) followed the last clustering. ``.schedule.inline`` does not
    gate a job's schedule. Returns (the other keys, {gating key: commits needed})."""
    rest = {k: v for k, v in conf.items() if k not in SCHEDULE_KEYS}
    try:
        on = {flag: boolean(conf.get(flag, False)) for flag in ("hoodie.clustering.inline",
                                                                "hoodie.clustering.async.enabled")}
        counts = {k: integer(conf.get(k, reg.hudi_keys(reg.O2)[k][0].default))
                  for k in ("hoodie.clustering.inline.max.commits", "hoodie.clustering.async.max.commits")}
        boolean(conf.get("hoodie.clustering.schedule.inline", False))
    except ValueError as exc:
        bad = next(k for k in SCHEDULE_KEYS if k in conf)
        raise HoodieConfError(f"{bad}: {exc}") from None
    gates = {}
    if on["hoodie.clustering.inline"]:
        gates["hoodie.clustering.inline.max.commits"] = counts["hoodie.clustering.inline.max.commits"]
    if on["hoodie.clustering.async.enabled"]:
        gates["hoodie.clustering.async.max.commits"] = counts["hoodie.clustering.async.max.commits"]
    return rest, gates
