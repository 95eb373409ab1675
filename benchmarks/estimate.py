"""Benchmark: the run's own estimate vs what its warm-up did, on the demo database.

Runs ``cutover-prep local`` (the sample database, on the emulated restored volume when FUSE can be
had: root, /dev/fuse) without the benchmark, ``--repeat`` times, and prints for each run the
estimate Discover made (bytes, rate and its source, seconds) beside the actual (findings.estimate),
with the ratios actual / estimate. A ratio of seconds above 1: the estimate was optimistic.

    .venv/bin/python benchmarks/estimate.py [--size-mb 60] [--repeat 1] [--max-concurrency 16]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import warnings
from pathlib import Path

from cutover_prep.local.runner import LocalOptions, run_local

MIB = 2**20


def one_run(size_mb: int, max_concurrency: int, out: Path) -> dict:
    warmup = {"max_concurrency": max_concurrency, "unit_mb": max(1, size_mb // 25)}  # as `cutover-prep local`
    result = run_local(LocalOptions(out=out, size_mb=size_mb, warmup=warmup, progress=False,
                                    benchmark={"enabled": False, "metrics_wait_minutes": 0,
                                               "compare_limits": False}))
    if result["status"] != "SUCCEEDED":
        raise SystemExit(f"run failed: {result.get('error')}: {result.get('cause')}")
    return json.loads((out / "findings.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--max-concurrency", type=int, default=16)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    print(f"{'run':<4} {'source':<17} {'est MiB':>8} {'act MiB':>8} {'est MiB/s':>9} {'act MiB/s':>9} "
          f"{'est s':>7} {'act s':>7} {'s ratio':>7} {'emul ceil':>9}")
    for i in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="cutover-prep-bench-estimate-") as tmp:
            findings = one_run(args.size_mb, args.max_concurrency, Path(tmp) / "out")
        section = findings.get("estimate") or {}
        est, act, ratio = section.get("estimate") or {}, section.get("actual") or {}, section.get("ratios") or {}
        ceiling = (findings.get("storage_emulation") or {}).get("ceiling_mib_per_s")
        print(f"{i + 1:<4} {str(est.get('source')):<17} {est.get('bytes_to_read', 0) / MIB:>8.1f} "
              f"{(act.get('bytes_read') or 0) / MIB:>8.1f} {est.get('assumed_mib_per_s') or 0:>9.2f} "
              f"{act.get('mib_per_s') or 0:>9.2f} {est.get('estimated_seconds') or 0:>7.1f} "
              f"{act.get('warmup_seconds') or 0:>7.1f} {ratio.get('seconds') or 0:>7.2f} "
              f"{ceiling if ceiling is not None else '-':>9}")


if __name__ == "__main__":
    main()
