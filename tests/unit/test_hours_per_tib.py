"""Issue 36 §4: which concurrency reaches a configuration's ceiling, what limits a warm-up, and the hours per
TiB page. Worked by hand from AWS's published figures: db.r6i.xlarge's EBS baseline is 1,250 Mbps
(https://docs.aws.amazon.com/ec2/latest/instancetypes/mo.html#mo_ebs: r6i.xlarge, baseline bandwidth 1,250
Mbps), i.e. 156.25 MB/s; seed 002's cold reader reads 17.35 MiB/s (630,808 x 8 KiB in 284 s)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from cutover_prep.dal.records.plan import PlanSummary
from cutover_prep.estimate import compute
from cutover_prep.estimate.ceiling import READER_COLD_MIB_PER_S, InstanceFacts, advice, hours_per_tib

ROOT = Path(__file__).resolve().parents[2]
R6I_XL = InstanceFacts(instance_class="db.r6i.xlarge", storage_type="gp3", allocated_gb=1024)


def test_the_reader_rate_is_the_estimate_s() -> None:
    assert READER_COLD_MIB_PER_S == compute.READER_COLD_MIB_PER_S == round(630_808 * 8192 / 284 / 2**20, 2)


def test_four_readers_are_the_limit_and_ten_reach_the_instance_s_ceiling() -> None:
    """156.25 / 17.35 = 9.006: ten readers; four read 4 x 17.35 = 69.4 MiB/s."""
    few = advice(R6I_XL, "postgres", 4)
    assert (few.readers_to_ceiling, few.limited_by, few.mib_per_s) == (10, "readers", 69.4)
    assert "raise warmup.max_concurrency to 10" in few.text
    many = advice(R6I_XL, "postgres", 16)
    assert many.limited_by == "instance" and "6 more than needed only queue" in many.text
    # 1 TiB at 156.25 MiB/s: 1,048,576 / 156.25 / 3600 = 1.864 h
    assert round(hours_per_tib(many.mib_per_s), 2) == round(1_048_576 / 156.2 / 3600, 2)


def test_estimate_says_the_limit_in_its_own_lines() -> None:
    rate = compute.limits_rate(R6I_XL, "postgres", 4)
    est = compute.estimate(engine="postgres", plan_summary=PlanSummary(units=8, bytes=2**30, segments=3),
                           max_concurrency=4, rate=rate)
    limit = [line for line in compute.lines(est) if line.startswith("limit:")]
    assert limit and "reached at concurrency 10" in limit[0] and "the readers limit it" in limit[0]


def test_the_hours_per_tib_page_holds_the_model_s_table() -> None:
    spec = importlib.util.spec_from_file_location("hours_per_tib", ROOT / "benchmarks" / "hours_per_tib.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = (ROOT / "docs" / "hours-per-tib.md").read_text()
    assert module.page_with_table(page) == page, "run: python benchmarks/hours_per_tib.py --write"
    row = "| db.r6i.xlarge | gp3 1 TiB (12,000 IOPS, 500 MiB/s) | 156 (instance) | 4.2 | 1.9 | 1.9 | 10 | 1.9 |"
    assert row in page
    assert "300 MiB/s: 58 min per TiB" in page  # 1,048,576 / 300 / 60 = 58.3
