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
``maintenance`` section in our harness, which schedules every engine alike, real Hudi's included:
in a scenario they are accepted when they agree with it and refused, naming both, when they do not.
A count is honoured in the mode that reads it (``.inline.max.commits`` as ``every_commits`` under
``inline``, ``.async.max.commits`` as ``async_max_commits`` under ``async``) and refused in another,
where it would be dropped. The table-identity keys (``hoodie.table.name``, ``recordkey.field``,
``partitionpath.field``, ``precombine.field``, ``keygenerator.class``) are accepted when they name
the scenario's table (the engine's name, the workload's record key, partition column, ordering field
and key generator) and refused, naming both, when they do not.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engines.config import registry as reg
from engines.config.parsers import boolean, integer, number
from engines.config.registry import HUDI, IDENTITIES, MB, SIMPLE_KEY_GENERATOR, Setting
from engines.kinds import KINDS
from workloads.spec import ORDERING_FIELD, RECORD_KEY


class HoodieConfError(ValueError):
    """A config key or value an engine cannot honour; the message names it."""


# When services run: the scenario's maintenance section (mode the key turns on, or None for a count).
SCHEDULE_KEYS: dict[str, str | None] = {
    s.hudi: (None if s.maintenance == "commits" else s.maintenance) for s in reg.SETTINGS
    if s.maintenance and s.hudi}


@dataclass(frozen=True)
class Schedule:
    """The scenario's ``maintenance`` section, as the scheduling keys are checked against it."""

    mode: str
    every_commits: int
    async_max_commits: int | None = None


def identity(engine: str, partition_column: str) -> dict[str, str]:
    """What each table-identity key must name for engine ``engine`` (:data:`registry.IDENTITIES`)."""
    return {"table_name": engine, "record_key": RECORD_KEY, "partition_column": partition_column,
            "ordering_field": ORDERING_FIELD, "key_generator": SIMPLE_KEY_GENERATOR}


def scenario_context(scenario: Any, engine: str) -> dict[str, Any]:
    """The ``schedule`` and ``identity`` arguments of :func:`read_config` for engine ``engine`` of
    ``scenario`` (a :class:`bench.scenario.Scenario`)."""
    m = scenario.maintenance
    return {"schedule": Schedule(m.mode, m.every_commits, m.async_max_commits),
            "identity": identity(engine, scenario.workload.partition_column)}


def _check_identity(s: Setting, key: str, value: Any, ids: Mapping[str, str], prefix: str) -> None:
    want = ids[str(s.identity)]
    got = str(value).strip()
    same = (got.rsplit(".", 1)[-1] == want.rsplit(".", 1)[-1] and got in (want, want.rsplit(".", 1)[-1])
            if s.identity == "key_generator" else got == want)
    if not same:
        raise HoodieConfError(f"{prefix}{key}={value} disagrees with {IDENTITIES[str(s.identity)]}, {want!r}")


def is_hoodie(key: str) -> bool:
    return key.startswith("hoodie.")


def split_hoodie(config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the ``hoodie.*`` keys of ``config``, the rest: our own shorthands)."""
    return ({k: v for k, v in config.items() if is_hoodie(k)}, {k: v for k, v in config.items() if not is_hoodie(k)})


def known_keys(kind: str) -> list[str]:
    """The ``hoodie.*`` keys ``kind`` honours (the scheduling and identity keys aside: a scenario's)."""
    return sorted(k for k, entries in reg.hudi_keys(settings_kind(kind)).items()
                  if not any(hasattr(s.parse, "refused") or s.maintenance or s.identity for s in entries))


def _nearest(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _parse(s: Setting, key: str, value: Any, prefix: str) -> Any:
    try:
        return s.parse(value)
    except (TypeError, ValueError) as exc:
        raise HoodieConfError(f"{prefix}{key}={value}: {exc}") from None


def translate(kind: str, conf: Mapping[str, Any], where: str = "", schedule: Schedule | None = None,
              identity: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``conf``'s ``hoodie.*`` keys as ``{config field: parsed value}`` for one of our kinds.

    ``schedule`` is the scenario's maintenance section: the scheduling keys must agree with it;
    ``identity`` (:func:`identity`) what the table-identity keys must name. Without them (the
    service, whose --mode and table decide) those keys are refused like any key we do not
    implement. Raises :class:`HoodieConfError` naming the first bad key."""
    prefix = f"{where}: " if where else ""
    entry = KINDS.get(kind)
    if entry is None or entry.settings is None:
        keys = ", ".join(sorted(conf))
        raise HoodieConfError(f"{prefix}{keys}: engine kind {kind!r} takes no hoodie.* keys (its config is our "
                              f"shorthands: {', '.join(sorted(reg.for_kind(kind)))})")
    keys = reg.hudi_keys(entry.settings)
    fields: dict[str, Any] = {}
    for key, value in conf.items():
        entries = keys.get(key, [])
        if entries and entries[0].maintenance:
            if schedule is not None:
                _check_schedule(key, value, schedule, prefix)
                continue
            entries = []
        if entries and entries[0].identity:
            if identity is not None:
                _check_identity(entries[0], key, value, identity, prefix)
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
            for field_name, implied in dict(s.implies).get(parsed, ()):
                if fields.get(field_name, implied) != implied:
                    raise HoodieConfError(f"{prefix}{key}={value} sets {field_name} {implied}, which another key "
                                          f"set to {fields[field_name]}; keep one")
                fields[field_name] = implied
    return fields


def read_config(kind: str, config: Mapping[str, Any], where: str = "", schedule: Schedule | None = None,
                identity: Mapping[str, str] | None = None) -> dict[str, Any]:
    """An engine's config (shorthands, ``*_mb`` sizes, ``hoodie.*`` keys) as ``{field: value}``,
    every value through its parser. For ``hudi`` the ``hoodie.*`` keys (top level and ``options``)
    are checked and kept unchanged in ``options``, but for the scheduling keys, which the
    maintenance section carries out when ``schedule`` is given. ``schedule`` and ``identity``: see
    :func:`translate` (:func:`scenario_context` gives both). Raises :class:`HoodieConfError` naming the key."""
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
        preset = fields.get("preset") or _default_preset(kind)
        unread = sorted(source[n] for n in fields if shorthands[n].hudi_key(preset) is None
                        and shorthands[n].derive is None and n not in reg.HUDI_ENGINE_READS)
        if unread:
            raise HoodieConfError(f"{prefix}{', '.join(unread)}: no Hudi key carries it to Apache Hudi and the engine "
                                  "does not read it; give its registry entry a hoodie.* key")
        dropped = sorted(source[n] for n in fields if not shorthands[n].honoured_by(preset))
        if dropped:
            honoured = ", ".join(shorthands[_field_of(dropped[0], source)].presets or ())
            raise HoodieConfError(f"{prefix}{', '.join(dropped)}: preset {preset!r} does not read it (only "
                                  f"{honoured} do); remove it rather than have it ignored")
        passed = _hudi_options(hoodie, options, prefix, schedule, identity, preset)
        both = {source[n]: shorthands[n].hudi_key(preset) for n in fields if shorthands[n].hudi_key(preset) in passed}
        if both:
            raise HoodieConfError(f"{prefix}{_pairs(both)} set twice, by the shorthand and by its hoodie.* key; "
                                  "keep one")
        return {**fields, "options": passed} if passed or options is not None else fields
    if hoodie:
        from_keys = translate(kind, hoodie, where, schedule, identity)
        both = {source[n]: _hoodie_key_of(kind, n, hoodie) for n in set(from_keys) & set(fields)}
        if both:
            raise HoodieConfError(f"{prefix}{_pairs(both)} set twice, by the shorthand and by its hoodie.* key; "
                                  "keep one")
        fields.update(from_keys)
    return fields


def _pairs(both: Mapping[str, str]) -> str:
    return ", ".join(f"{short} and {key}" for short, key in sorted(both.items()))


def _field_of(key: str, source: Mapping[str, str]) -> str:
    return next(n for n, k in source.items() if k == key)


def _hoodie_key_of(kind: str, name: str, hoodie: Mapping[str, Any]) -> str:
    """The key of ``hoodie`` that set field ``name`` for ``kind`` (its own entry or one implying it)."""
    keys = reg.hudi_keys(settings_kind(kind))
    return next((k for k in hoodie for s in keys.get(k, []) if s.name == name
                 or any(name == f for _, implied in s.implies for f, _ in implied)), "a hoodie.* key")


def _default_preset(kind: str) -> str:
    """The preset of a hudi kind's config class when the config names none."""
    from dataclasses import fields as dc_fields

    return next(f.default for f in dc_fields(KINDS[kind].load("config")) if f.name == "preset")


def settings_kind(kind: str) -> str:
    """The config registry's kind whose keys engine kind ``kind`` reads (its registry entry's
    ``settings``; a kind without one, its own name)."""
    entry = KINDS.get(kind)
    return entry.settings if entry is not None and entry.settings else kind


def _passes_hoodie_through(kind: str) -> bool:
    """Whether ``kind`` is Apache Hudi itself, which takes ``hoodie.*`` keys unchanged."""
    entry = KINDS.get(kind)
    return entry is not None and entry.builder == "hudi"


def _hudi_options(hoodie: dict[str, Any], options: Any, prefix: str, schedule: Schedule | None = None,
                  identity: Mapping[str, str] | None = None, preset: str = "hudi_cow") -> dict[str, Any]:
    """Real Hudi's pass-through keys (top level, then ``options``, which win), each checked: a key
    the registry does not list is taken for a misspelling, a value its parser refuses is refused;
    with ``schedule``, a scheduling key is checked against it and left to the maintenance section
    (passed on, Hudi would run its own services beside the harness's); with ``identity``, an
    identity key must name the scenario's."""
    if options is not None and not isinstance(options, dict):
        raise HoodieConfError(f"{prefix}options: a map of hoodie.* keys to values, got {options!r}")
    passed = {**hoodie, **(options or {})}
    known = reg.hudi_keys(HUDI)
    for key, value in list(passed.items()):
        if not is_hoodie(str(key)):
            raise HoodieConfError(f"{prefix}options.{key}: options may hold only hoodie.* keys "
                                  "(passed to Apache Hudi unchanged)")
        if key not in known:
            raise HoodieConfError(f"{prefix}{key}: not a Hudi key this harness knows{_nearest(key, sorted(known))}; "
                                  "a key real Hudi reads is one entry in engines/config/registry.py")
        try:
            s = hudi_entry(key, preset)
        except HoodieConfError as exc:
            raise HoodieConfError(f"{prefix}{exc}") from None
        if s.maintenance and schedule is not None:
            _check_schedule(key, value, schedule, prefix)
            del passed[key]
            continue
        _parse(s, key, value, prefix)
        if s.identity and identity is not None:
            _check_identity(s, key, value, identity, prefix)
    return passed


def hudi_entry(key: str, preset: str = "hudi_cow") -> Setting:
    """The entry whose parser checks ``key`` for real Hudi under ``preset``: the hudi kind's own
    (:func:`registry.hudi_preset_keys`), else a field's of our kinds (passed through). A key of the
    hudi kind that ``preset`` does not write or read is refused: Hudi would drop it."""
    own = reg.hudi_preset_keys(preset)
    if key in own:
        return own[key]
    others = [p for p in reg.PRESET_NAMES if key in reg.hudi_preset_keys(p)]
    if others:
        raise HoodieConfError(f"{key}: preset {preset!r} does not read it (only {', '.join(others)} do); remove it "
                              "rather than have it ignored")
    entries = reg.hudi_keys(HUDI)[key]
    return next((s for s in entries if s.name), entries[0])


def named_columns(kind: str, fields: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """The columns an engine's read config (:func:`read_config`'s result) names, by the key that
    names them: its column-valued shorthands, and for real Hudi its column-valued ``hoodie.*`` options."""
    shorthands = reg.for_kind(settings_kind(kind))
    named = {k: tuple(v) for k, v in fields.items() if k in shorthands and shorthands[k].unit == "columns" and v}
    preset = fields.get("preset") or (_default_preset(kind) if _passes_hoodie_through(kind) else "hudi_cow")
    for key, value in (fields.get("options") or {}).items():
        if key in reg.hudi_keys(HUDI) and hudi_entry(key, preset).unit == "columns" and value not in (None, ""):
            named[key] = hudi_entry(key, preset).parse(value)
    return named


def hudi_bloom(config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``bloom_*`` fields real Hudi's config sets (shorthands, or ``hoodie.*`` keys at the top
    level or in ``options``)."""
    fields = read_config(HUDI, config)
    out = {k: v for k, v in fields.items() if k in reg.BLOOM}
    for key, value in fields.get("options", {}).items():
        s = hudi_entry(key, fields.get("preset") or _default_preset(HUDI))
        if s.name in reg.BLOOM:
            out[s.name] = s.parse(value)
    return out


def _check_schedule(key: str, value: Any, schedule: Schedule, prefix: str) -> None:
    """A scheduling key against the scenario's maintenance section (module docstring)."""
    mode = schedule.mode
    why = " (the maintenance section schedules every engine)"
    try:
        if SCHEDULE_KEYS[key] is not None:
            if boolean(value) != (mode == SCHEDULE_KEYS[key]):
                raise HoodieConfError(f"{prefix}{key}={value} disagrees with the scenario's maintenance.mode "
                                      f"{mode!r}{why}")
            return
        n = integer(value)
    except ValueError as exc:
        if isinstance(exc, HoodieConfError):
            raise
        raise HoodieConfError(f"{prefix}{key}={value}: {exc}") from None
    reads = {s.hudi: s.counts_for for s in reg.SETTINGS if s.counts_for}
    if key not in reads:
        raise HoodieConfError(f"{prefix}{key}: a scheduling key the harness does not read")
    own_mode, field_name = reads[key]
    want = getattr(schedule, field_name)
    if mode != own_mode:
        semi = (" (semi-async schedules after every commit when no plan is pending, as Hudi 0.12.1, and "
                "executes every maintenance.every_commits)" if mode == "schedule_inline" else "")
        raise HoodieConfError(f"{prefix}{key}={value}: only {own_mode} clustering reads it, and the scenario's "
                              f"maintenance.mode is {mode!r}{semi}; remove it rather than have it ignored")
    if want is None:
        raise HoodieConfError(f"{prefix}{key}={value}: the scenario's maintenance.{field_name} is not set (the "
                              f"async service runs every async_interval_s); set it to {n} to have the key honoured")
    if n != want:
        raise HoodieConfError(f"{prefix}{key}={value} disagrees with the scenario's maintenance.{field_name} "
                              f"{want}{why}")


def clustering_job_gates(conf: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    """For ``service --design clustering`` (HoodieClusteringJob): the scheduling keys as the gates
    Hudi's ``ClusteringPlanActionExecutor`` applies to a schedule — with ``hoodie.clustering.inline``
    or ``.async.enabled`` true, no plan until that many commits (``.inline.max.commits`` /
    ``.async.max.commits``, default 4) followed the last clustering. ``.schedule.inline`` does not
    gate a job's schedule. Returns (the other keys, {gating key: commits needed})."""
    rest = {k: v for k, v in conf.items() if k not in SCHEDULE_KEYS}
    flag_of = {s.maintenance: s for s in reg.SETTINGS if s.hudi in SCHEDULE_KEYS and SCHEDULE_KEYS[s.hudi]}
    gates = {}
    try:
        for flag in flag_of.values():
            boolean(conf.get(flag.hudi, flag.default))  # every flag checked, .schedule.inline gating nothing
        for count in (s for s in reg.SETTINGS if s.counts_for):  # a count gates when its mode's flag is on
            n = integer(conf.get(count.hudi, count.default))
            flag = flag_of[count.counts_for[0]]
            if boolean(conf.get(flag.hudi, flag.default)):
                gates[str(count.hudi)] = n
    except ValueError as exc:
        bad = next(k for k in SCHEDULE_KEYS if k in conf)
        raise HoodieConfError(f"{bad}: {exc}") from None
    return rest, gates
