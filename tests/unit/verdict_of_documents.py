"""The verdict of findings written as documents (findings.json's shape, or an excerpt of it): what the unit tests
judge by. The product judges records only (``verdict.judge`` on ``Findings``); the tests write the findings they
judge as the JSON a run stores, read here with ``Findings.read`` as the product reads a stored one."""

from __future__ import annotations

from typing import Any

from cutover_prep.dal.records.findings import Findings
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.verdict import judge


def decide(findings: Findings | dict[str, Any], thresholds: Thresholds | None = None,
           baseline: Findings | dict[str, Any] | None = None, *, benchmark_requested: bool = True,
           probes_requested: bool = True, warmup_requested: bool = True) -> dict[str, Any]:
    """The verdict and its reasons (failing reasons first), as findings.json's ``verdict`` holds it."""
    return judge(_read(findings), thresholds, _read(baseline) if baseline else None,
                 benchmark_requested=benchmark_requested, probes_requested=probes_requested,
                 warmup_requested=warmup_requested).stored()


def _read(doc: Findings | dict[str, Any]) -> Findings:
    return doc if isinstance(doc, Findings) else Findings.read(doc)
