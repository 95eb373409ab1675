"""A run id means one target: a restart must ask for the same run, or fail by name.

A restart of a run id reuses its plan and skips its finished units, so it may only
change options that cannot change what is read or how it is judged: how many units run
at once, how long to wait, and whether the opt-in write test runs (the current input
decides that at the moment a write point runs). Anything else that differs, above all
the target, is ``RunIdReused`` naming each difference; nothing is read.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from cutover_prep.dal.dynamo import plain
from cutover_prep.dal.records.run import INPUT_SECTIONS, RecordedInput, RunItem
from cutover_prep.dal.records.run_input import RecordedRestore, RecordedTarget
from cutover_prep.models.benchmark import Benchmark
from cutover_prep.models.run_input import RunIdReused
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.models.warmup import Warmup

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


def _text(value: object, *, stored: bool) -> str:
    """A field's value as JSON text; ``stored``: a number as the run item gives it back (DynamoDB's 100.0 is 100), as
    the message has always shown the first attempt's."""
    text = json.dumps(value, sort_keys=True)
    return json.dumps(plain(json.loads(text, parse_float=Decimal)), sort_keys=True) if stored else text


def _flat(section: str, value: BaseModel | None, *, stored: bool) -> dict[str, str]:
    if value is None:
        return {section: _text(None, stored=stored)}
    return {f"{section}.{k}": _text(v, stored=stored) for k, v in value.model_dump(mode="json").items()
            if (section, k) not in MAY_CHANGE}


def bound_options(recorded: RecordedInput, *, stored: bool = False) -> dict[str, str]:
    """The run input's fields a run id is bound to, flattened to ``section.field`` (each value's JSON text; ``stored``:
    the run item's, its numbers as DynamoDB gives them back)."""
    out: dict[str, str] = {}
    for section in SECTIONS:
        out.update(_flat(section, getattr(recorded, section), stored=stored))
    return out


def _config_input(config: dict[str, Any]) -> RecordedInput:
    """The sections of ``config`` (``parse_run_input``'s: each of them, ``restore`` None without one) as a run item
    records them."""
    restore = config["restore"]
    return RecordedInput(target=RecordedTarget.model_validate(config["target"]),
                         restore=RecordedRestore.model_validate(restore) if restore is not None else None,
                         warmup=Warmup.model_validate(config["warmup"]),
                         benchmark=Benchmark.model_validate(config["benchmark"]),
                         verdict=Thresholds.model_validate(config["verdict"]))


def check_restart(run_item: RunItem, config: dict[str, Any]) -> None:
    """Raise ``RunIdReused`` unless ``config`` asks for the run ``run_item`` records."""
    first = bound_options(run_item.recorded_input(), stored=True)
    now = bound_options(_config_input(config))
    differ = sorted(k for k in first.keys() & now.keys() if json.loads(first[k]) != json.loads(now[k]))  # 100 == 100.0
    differ += sorted(k for k in first.keys() ^ now.keys() if "." not in k)  # a whole section added or dropped
    if differ:
        shown = "; ".join(f"{k}: {_short(first.get(k))} -> {_short(now.get(k))}" for k in differ[:8])
        more = f" and {len(differ) - 8} more" if len(differ) > 8 else ""
        raise RunIdReused(
            f"run_id {config['run_id']!r} was started with other options ({shown}{more}); a restart may change only "
            f"{', '.join(sorted(f'{s}.{f}' for s, f in MAY_CHANGE))}. Use a new run_id for a new run, or restart "
            "with the first input")


def _short(text: str | None) -> str:
    shown = repr(json.loads(text) if text is not None else None)
    return shown if len(shown) <= 60 else shown[:57] + "..."
