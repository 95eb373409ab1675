"""A run id means one target: a restart must ask for the same run, or fail by name.

A restart of a run id reuses its plan and skips its finished units, so it may only
change options that cannot change what is read or how it is judged: how many units run
at once, how long to wait, and whether the opt-in write test runs (the current input
decides that at the moment a write point runs). Anything else that differs, above all
the target, is ``RunIdReused`` naming each difference; nothing is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cutover_prep.dal.records.run import INPUT_SECTIONS, RecordedInput, RunItem
from cutover_prep.models.run_input import RunIdReused

# (section, field) of the run input that a restart may change.
MAY_CHANGE: frozenset[tuple[str, str]] = frozenset({
    ("warmup", "max_concurrency"), ("warmup", "wait_seconds"),
    *(("warmup", f) for f in ("adaptive", "adaptive_start", "adaptive_margin_pct", "adaptive_window_seconds",
                              "adaptive_window_chunks")),  # how many units read at once, never what is read
    ("benchmark", "write_test"), ("benchmark", "metrics_wait_minutes"), ("benchmark", "metrics_poll_seconds"),
    ("restore", "poll_seconds"), ("restore", "max_wait_minutes"),
})
# the run input's sections a run id is bound to (the run item records each: records.run.RecordedInput)
SECTIONS = ("target", "restore", *INPUT_SECTIONS)


def _flat(section: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {section: value}
    return {f"{section}.{k}": v for k, v in value.items() if (section, k) not in MAY_CHANGE}


def bound_options(sections: dict[str, Any]) -> dict[str, Any]:
    """The run input's fields a run id is bound to, flattened to ``section.field``."""
    out: dict[str, Any] = {}
    for section in SECTIONS:
        out.update(_flat(section, sections.get(section)))
    return out


def check_restart(run_item: RunItem | Mapping[str, Any], config: dict[str, Any]) -> None:
    """Raise ``RunIdReused`` unless ``config`` asks for the run ``run_item`` records."""
    first = bound_options(RecordedInput.of(run_item).sections())
    now = bound_options(config)
    differ = sorted(k for k in first.keys() & now.keys() if first[k] != now[k])
    differ += sorted(k for k in first.keys() ^ now.keys() if "." not in k)  # a whole section added or dropped
    if differ:
        shown = "; ".join(f"{k}: {_short(first.get(k))} -> {_short(now.get(k))}" for k in differ[:8])
        more = f" and {len(differ) - 8} more" if len(differ) > 8 else ""
        raise RunIdReused(
            f"run_id {config['run_id']!r} was started with other options ({shown}{more}); a restart may change only "
            f"{', '.join(sorted(f'{s}.{f}' for s, f in MAY_CHANGE))}. Use a new run_id for a new run, or restart "
            "with the first input")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
