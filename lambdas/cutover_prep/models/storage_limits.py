"""What RDS accepts for the storage of a restored instance, per storage type: one table, one check.

Source: Amazon RDS User Guide, "Amazon RDS DB instance storage"
(https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Storage.html), the rows for
Oracle, PostgreSQL, MySQL and MariaDB:

- io1: 100-65,536 GiB, 1,000-256,000 IOPS, 0.5-50 IOPS per GiB.
- io2 (Block Express): 100-65,536 GiB, 1,000-256,000 IOPS, 0.5-1,000 IOPS per GiB (0.5-500 on
  instances not based on the Nitro System: the input does not say which, so the wider range).
- gp3: 20-65,536 GiB; below the striping threshold (400 GiB; 200 GiB on Oracle) the baseline
  3,000 IOPS / 125 MiB/s is fixed ("N/A": neither can be provisioned); from it, 12,000-64,000
  IOPS and 500-4,000 MiB/s, at most 0.25 MiB/s per IOPS and 500 IOPS per GiB.
- gp2: IOPS follow the size and cannot be provisioned; nor can throughput.
- standard (magnetic): at most 3 TiB, nothing provisioned.

The run input's own minimum of 20 GiB stands where RDS allows less (gp2 on PostgreSQL and MySQL).
Not checked: that Oracle reaches 256,000 io1 IOPS only on r5b classes, and that RDS raises gp3
throughput itself above 32,000 IOPS on MySQL and MariaDB (both are RDS's to adjust, not refusals).
The striping threshold per engine is the engine registry's (``LimitsFacts.stripe_threshold_gb``);
with no engine given, the lowest (Oracle's), so a valid input of any engine is never refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutover_prep.engines.registry import families, family

SOURCE = "RDS User Guide, Amazon RDS DB instance storage"


@dataclass(frozen=True)
class StorageRule:
    """What RDS accepts with one storage type. ``None``: that value cannot be provisioned."""

    min_gb: int
    max_gb: int
    iops: tuple[int, int] | None = None
    iops_per_gb: tuple[float, float] | None = None
    throughput: tuple[int, int] | None = None  # MiB/s
    max_throughput_per_iops: float | None = None
    provisioned_from_stripe: bool = False  # gp3: IOPS and throughput only from the striping threshold
    striped_baseline_iops: int | None = None  # the IOPS a striped volume has when none are given


STORAGE_RULES: dict[str, StorageRule] = {
    "io1": StorageRule(min_gb=100, max_gb=65_536, iops=(1_000, 256_000), iops_per_gb=(0.5, 50)),
    "io2": StorageRule(min_gb=100, max_gb=65_536, iops=(1_000, 256_000), iops_per_gb=(0.5, 1_000)),
    "gp3": StorageRule(min_gb=20, max_gb=65_536, iops=(12_000, 64_000), iops_per_gb=(0, 500),
                       throughput=(500, 4_000), max_throughput_per_iops=0.25, provisioned_from_stripe=True,
                       striped_baseline_iops=12_000),
    "gp2": StorageRule(min_gb=20, max_gb=65_536),
    "standard": StorageRule(min_gb=20, max_gb=3_072),
}


def stripe_threshold_gb(engine: str | None) -> int:
    """From this size RDS stripes the storage (and takes gp3 IOPS and throughput); the lowest of
    all engines when the engine is not known."""
    if engine:
        return family(engine).limits.stripe_threshold_gb
    return min(f.limits.stripe_threshold_gb for f in families())


def _threshold_words(engine: str | None) -> str:
    if engine:
        fam = family(engine)
        return f"{fam.limits.stripe_threshold_gb:,} GiB on {fam.label}"
    by_size: dict[int, list[str]] = {}
    for fam in families():
        by_size.setdefault(fam.limits.stripe_threshold_gb, []).append(fam.label)
    return " and ".join(f"{gb:,} GiB on {_words(labels)}" for gb, labels in sorted(by_size.items()))


def _words(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _range(low: float, high: float) -> str:
    return f"{low:,g}-{high:,g}"


def storage_problem(storage_type: str | None, allocated_gb: int | None, iops: int | None,
                    throughput: int | None, engine: str | None = None) -> tuple[str, str] | None:
    """The first value RDS would refuse, as (field, why), or None. ``allocated_gb`` None: the
    snapshot's size, unknown here, so the rules that need the size are not applied."""
    if iops is not None and storage_type not in ("io1", "io2", "gp3"):
        return "iops", "needs storage_type io1, io2 or gp3 (RDS provisions IOPS on those only)"
    if throughput is not None and storage_type != "gp3":
        return "storage_throughput", "needs storage_type gp3 (RDS provisions throughput on gp3 only)"
    if storage_type in ("io1", "io2") and iops is None:
        return "iops", f"storage_type {storage_type} needs iops"
    rule = STORAGE_RULES.get(storage_type or "")
    if rule is None:
        return None
    gb = allocated_gb
    if gb is not None and not rule.min_gb <= gb <= rule.max_gb:
        return "allocated_gb", (f"{storage_type} takes {_range(rule.min_gb, rule.max_gb)} GiB; {gb:,} GiB given "
                                f"({SOURCE})")
    if rule.provisioned_from_stripe and gb is not None and gb < stripe_threshold_gb(engine):
        field = "iops" if iops is not None else "storage_throughput" if throughput is not None else None
        if field:
            return field, (f"{storage_type} {field.replace('storage_', '')} can be provisioned only from "
                           f"{_threshold_words(engine)}; on {gb:,} GiB RDS gives the fixed baseline "
                           f"3,000 IOPS / 125 MiB/s: drop {field} or give more allocated_gb ({SOURCE})")
    if iops is not None and rule.iops is not None:
        if not rule.iops[0] <= iops <= rule.iops[1]:
            return "iops", f"{storage_type} takes {_range(*rule.iops)} IOPS; {iops:,} given ({SOURCE})"
        if gb is not None and rule.iops_per_gb is not None:
            low, high = rule.iops_per_gb
            if not low * gb <= iops <= high * gb:
                fits = _range(max(low * gb, rule.iops[0]), min(high * gb, rule.iops[1]))
                return "iops", (f"{iops:,} IOPS on {gb:,} GiB of {storage_type} is {iops / gb:,.4g} IOPS per GiB; "
                                f"RDS takes {_range(low, high)} per GiB, so {fits} IOPS on {gb:,} GiB ({SOURCE})")
    if throughput is not None and rule.throughput is not None:
        if not rule.throughput[0] <= throughput <= rule.throughput[1]:
            return "storage_throughput", (f"{storage_type} takes {_range(*rule.throughput)} MiB/s; "
                                          f"{throughput:,} given ({SOURCE})")
        per_iops = rule.max_throughput_per_iops
        with_iops = iops if iops is not None else rule.striped_baseline_iops
        if per_iops is not None and with_iops is not None and throughput > per_iops * with_iops:
            given = "" if iops is not None else " (the baseline: iops not given)"
            return "storage_throughput", (f"{throughput:,} MiB/s is more than {per_iops:g} MiB/s per IOPS allows "
                                          f"with {with_iops:,} IOPS{given}: at most {per_iops * with_iops:,g} "
                                          f"MiB/s, or more iops ({SOURCE})")
    return None
