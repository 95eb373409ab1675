"""What ``cutover-prep estimate`` feeds the estimate beyond the plan: the findings of earlier local runs of
the same database (``--evidence DIR``: a measured rate), the restored instance's price per hour (the
comparison's price book: the Price List API, else the shipped, dated price file), and the selection it
reports. No click here: the command, its options, its connection and its exit codes are ``cli/estimate.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from cutover_prep.dal.records.findings import Findings
from cutover_prep.estimate.ceiling import InstanceFacts
from cutover_prep.estimate.compute import FindingsTarget, Selection


def local_findings(evidence: Path, spec: Any) -> list[Findings]:
    """Findings of earlier local runs of the same database (engine, host, port and database alike)."""
    found = []
    for path in sorted(evidence.glob("*/findings.json")) if evidence.is_dir() else []:
        try:
            findings = Findings.read(json.loads(path.read_text()))
            target = findings.target or FindingsTarget()
        except (OSError, ValueError, TypeError):
            continue
        if (target.engine, target.host, target.port, target.database) == (
                spec.engine, spec.host, spec.port, spec.database):
            found.append(findings)
    return found


def restored_price(session: Any, facts: InstanceFacts, engine: str) -> tuple[float | None, str | None]:
    """The restored instance's price per hour (its class and storage: ``facts``) from the comparison's price book:
    the Price List API, else the shipped, dated price file; (None, why) when neither knows it."""
    try:
        from cutover_prep.pricing.book import PRICING_REGION, PriceBook
    except ImportError as exc:
        return None, f"the restored instance's price per hour is not known (no price book: {exc})"
    configuration = SimpleNamespace(db_instance_class=facts.instance_class, iops=facts.iops,
                                    storage_type=facts.storage_type, allocated_gb=facts.allocated_gb,
                                    storage_throughput=facts.storage_throughput)
    if not configuration.db_instance_class or configuration.storage_type not in ("gp2", "gp3", "io1", "io2") \
            or not configuration.allocated_gb:
        return None, "the restored instance's price per hour is not known (class or storage not known)"
    try:
        client = session.client("pricing", region_name=PRICING_REGION)
        price = PriceBook(client=client, region=session.region_name or PRICING_REGION).configuration(
            configuration, engine)
    except (ValueError, KeyError, TypeError) as exc:
        return None, f"the restored instance's price per hour is not known ({type(exc).__name__}: {exc})"
    if price.per_hour_usd is None:
        return None, f"the restored instance's price per hour is not known ({price.source})"
    return price.per_hour_usd, f"the restored instance at ${price.per_hour_usd:,.4f} per hour ({price.source})"


def selection_of(warmup: dict[str, Any]) -> dict[str, Any]:
    """What the warm-up selects (``Selection``: the run input's words), for the output and the hint."""
    return Selection.model_validate(warmup).model_dump()
