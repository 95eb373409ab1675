"""Benchmark: the warm-up ETA's error on recorded runs (issue 23 §2: within ±15 % at half the bytes).

For each evidence directory of a finished run (``out/<run id>/`` of ``make demo`` / ``cutover-prep local``), prints
the warm-up time and the ETA's error at 25/50/75 % of the bytes as the run's findings judged it
(``findings.warmup.eta``), and the same replayed by this checkout's estimator on what the run kept
(``warmup/eta_replay.json``): the two agree unless the estimator changed since the run. The machine's load is not
in the evidence: note ``uptime`` while the run goes.

    .venv/bin/python benchmarks/eta_runs.py out/local-20261126T135658 [more run directories]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cutover_prep.findings.eta import REPLAY_EVIDENCE, EtaReplay


def errors(eta: dict) -> str:
    if not eta.get("judged"):
        return f"not judged: {eta.get('why')}"
    return " / ".join(f"{a['error_pct']:+.1f}" for a in eta.get("at") or [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    args = parser.parse_args()
    print("| run | warm-up s | ETA error % at 25 / 50 / 75 (findings) | replayed now |")
    print("| --- | --- | --- | --- |")
    for run in args.runs:
        findings = json.loads((run / "findings.json").read_text())
        replay = run / REPLAY_EVIDENCE
        now = (errors(EtaReplay.model_validate(json.loads(replay.read_text())).replay().judgement.stored())
               if replay.exists() else "-")
        print(f"| {findings['run_id']} | {findings['timings']['warmup_wall_seconds']:.1f} | "
              f"{errors(findings['warmup']['eta'])} | {now} |")


if __name__ == "__main__":
    main()
