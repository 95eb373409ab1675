"""Issue 35 §5: the IO-size sweep stops at the platform's maximum I/O size, and each point says the size Oracle
used.

Database Reference, "DB_FILE_MULTIBLOCK_READ_COUNT" (https://docs.oracle.com/database/122/REFRN/DB_FILE_MULTIBLOCK_READ_COUNT.htm):
the default corresponds to the maximum I/O size that can be performed efficiently, "1MB for most platforms";
Oracle9i Database Reference, same parameter (https://docs.oracle.com/cd/B10500_01/server.920/a96536/ch143.htm):
"The maximum value is always less than the operating system's maximum I/O size expressed as Oracle blocks
((max I/O size)/DB_BLOCK_SIZE). If you set this parameter to a value greater than the maximum, Oracle uses the
maximum." So with 8 KiB blocks 256 and 512 both read 1 MiB (128 blocks): labelled 2 and 4 MiB they would be
wrong, and they measure the same thing as 128. Hand-worked: 1 MiB / 8 KiB = 128, 1 MiB / 16 KiB = 64."""

from __future__ import annotations

from cutover_prep.benchmark.steps import sweep_options
from cutover_prep.engines.bench import PointSpec, SweepTarget
from cutover_prep.engines.oracle.bench import OracleBench
from cutover_prep.models.benchmark import Benchmark
from tests.unit.test_oracle_bench import TARGET, bench, clock, shared  # noqa: F401 (fixtures)


def points(values, block_size):
    target = SweepTarget(TARGET.segment_key, TARGET.locator, TARGET.extents, block_size)
    options = sweep_options(Benchmark(mbrc_values=values, seconds_per_point=3))
    return [(p.point_id, p.io_size_kb, p.knobs) for p in OracleBench(lambda: None).io_size_points(options, target)]


def test_values_above_the_1_mib_maximum_are_capped_and_not_measured_twice():
    assert points([64, 128, 256, 512], 8192) == [
        ("mbrc-064", 512.0, {"db_file_multiblock_read_count": 64}),
        ("mbrc-128", 1024.0, {"db_file_multiblock_read_count": 128, "requested": [256, 512]})]


def test_a_value_asked_only_above_the_maximum_is_measured_at_the_maximum_and_says_what_was_asked():
    assert points([8, 256], 16384) == [
        ("mbrc-008", 128.0, {"db_file_multiblock_read_count": 8}),
        ("mbrc-064", 1024.0, {"db_file_multiblock_read_count": 64, "requested": [256]})]


def test_each_point_is_labelled_with_the_value_oracle_used_after_the_set(bench, shared, clock):  # noqa: F811
    """The session's V$PARAMETER after the ALTER SESSION: here the platform's maximum is 512 KiB, so Oracle
    used 64 where 128 was asked (hand-worked: 64 x 8 KiB = 512 KiB)."""
    shared["answers"]["name = 'db_file_multiblock_read_count'"] = [("64",)]
    result = bench.scan(PointSpec("mbrc-128", "sequential", 60, knobs={"db_file_multiblock_read_count": 128}),
                        TARGET, deadline=clock() + 0.02)
    asked = [i for i, (s, _) in enumerate(shared["log"]) if "SET db_file_multiblock_read_count = 128" in s]
    read_back = [i for i, (s, _) in enumerate(shared["log"]) if "name = 'db_file_multiblock_read_count'" in s]
    assert asked and read_back and asked[0] < read_back[0]
    assert any("Oracle used db_file_multiblock_read_count = 64 (512 KiB), not the 128 asked" in n
               for n in result.notes)
