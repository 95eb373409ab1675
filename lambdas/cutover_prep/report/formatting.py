"""How the report writes a figure for people (pure): numbers with their units, times, the names of keys,
free-form values; DASH for what is missing. Shared by every section of the view model."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cutover_prep.report.charts import fmt_number, num

DASH = "—"
MIB = 2**20
UNIT_SUFFIXES = (("_mib_s", "MiB/s"), ("_mb_s", "MiB/s"), ("_kbps", "KiB/s"), ("_mbps", "Mbps"), ("_gb", "GiB"),
                 ("_kb", "KiB"), ("_pct", "%"), ("_minutes", "min"), ("_seconds", "s"))
KEY_LABELS = {"throughput_mbps": "storage throughput given (MiB/s)", "iops": "IOPS", "ebs_optimized": "EBS-optimized"}
WORDS = {"iops": "IOPS", "ebs": "EBS", "gp2": "gp2", "db": "DB"}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def fmt(value: Any, unit: str = "", *, scale: float = 1.0, digits: int | None = None) -> str:
    """A number for people: thousands separators, a few significant digits, DASH when absent."""
    number = num(value)
    if number is None:
        return DASH if value in (None, "") or isinstance(value, int | float) else str(value)
    number *= scale
    text = f"{number:,.{digits}f}" if digits is not None else fmt_number(number)
    return f"{text} {unit}".strip()


def fmt_time(value: Any) -> str:
    if not value:
        return DASH
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if moment.tzinfo else "")


def humanize(key: str) -> str:
    if key in KEY_LABELS:
        return KEY_LABELS[key]
    unit = ""
    for suffix, name in UNIT_SUFFIXES:
        if key.endswith(suffix):
            key, unit = key[: -len(suffix)], f" ({name})"
            break
    words = [WORDS.get(w, w) for w in str(key).split("_") if w]
    return " ".join(words) + unit


def fmt_value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or value == "":
        return DASH
    if isinstance(value, int | float):
        return fmt(value)
    if isinstance(value, list):
        return ", ".join(fmt_value(v) for v in value) or DASH
    if isinstance(value, dict):
        return "; ".join(f"{humanize(str(k))}: {fmt_value(v)}" for k, v in value.items()) or DASH
    return str(value)


def unique(items: list[Any]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        if item not in (None, ""):
            seen.setdefault(str(item), None)
    return list(seen)
