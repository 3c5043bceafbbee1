"""``docs/config.md``, generated from the registry: every key with its Hudi name, shorthand,
default, unit, the engine kinds that honour it and its doc line. ``python -m engines.config.docs``
prints it; tests/test_config_registry.py checks the file in the repository equals it."""

from __future__ import annotations

from typing import Any

from engines.config.registry import GB, HUDI, MB, OURS, SETTINGS, Setting

HEADER = """# Config keys

Generated from `engines/config/registry.py` by `python -m engines.config.docs > docs/config.md`;
a test checks this file equals the generated one. Each key is written once, there.

An engine's `config` in a scenario takes our shorthand, its `*_mb` form for a size (`max_file_size`
-> `max_file_mb`, `small_file_limit` -> `small_file_limit_mb`), or Apache Hudi's key; a field set
by both is refused, as is a key the engine's kind does not take (`layoutbench validate`, exit 3).
Our kinds over Hudi tables ({ours}) read the `hoodie.*` keys listed for
them; real Hudi (`{hudi}`) takes every `hoodie.*` key below, passed through unchanged, and refuses any
other as a misspelling.
`layoutbench service --hoodie-conf` takes the Hudi keys of `clustering` and `append_compaction`.
Keys without a shorthand are fixed by a design, owned by the scenario's `maintenance` section, or
read by real Hudi only.

| Hudi key | shorthand | default | unit | honoured by | what it does |
| --- | --- | --- | --- | --- | --- |
"""


def _default(s: Setting) -> str:
    v: Any = s.default
    if v is None:
        return "—" if s.name is None else "none"
    if s.unit == "bytes" and isinstance(v, int) and v:
        return f"{v // GB} GB" if v % GB == 0 else f"{v // MB} MB" if v % MB == 0 else str(v)
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, tuple):
        return ",".join(v) or "(none)"
    return str(v)


def _values(s: Setting) -> str:
    choices = getattr(s.parse, "choices", None)
    return f" (one of: {', '.join(choices)})" if choices and len(choices) > 1 else ""


def _kinds(s: Setting) -> str:
    """The kinds honouring ``s``: real Hudi's with the presets that read it, the kinds that take its
    Hudi key when only some do."""
    names = [f"{k} ({', '.join(s.presets)})" if k == HUDI and s.presets else k for k in s.kinds]
    text = ", ".join(names)
    if s.hudi_kinds is not None and s.hudi:
        text += f"; its Hudi key: {', '.join(s.hudi_kinds)}"
    return text


def _row(s: Setting) -> str:
    refused = getattr(s.parse, "refused", None)
    kinds = _kinds(s)
    if refused:
        kinds = f"refused by {kinds}"
    shorthand = f"`{s.name}`" if s.name else ("maintenance section" if s.maintenance else "—")
    hudi = f"`{s.hudi}`" if s.hudi else "—"
    for presets, key in s.hudi_for:
        hudi += f" (`{key}` under {', '.join(presets)})"
    doc = (refused or s.doc).replace("|", "\\|") + _values(s)
    return f"| {hudi} | {shorthand} | {_default(s)} | {s.unit} | {kinds} | {doc} |"


def render() -> str:
    """The whole of ``docs/config.md``."""
    return HEADER.format(ours=", ".join(f"`{k}`" for k in OURS), hudi=HUDI) + "\n".join(map(_row, SETTINGS)) + "\n"


if __name__ == "__main__":
    print(render(), end="")
