"""``findings.storage_emulation`` and the instance facts of a local run (pure).

Only ``cutover-prep local`` writes the emulation evidence (``dal.store.EMULATION_EVIDENCE``):
the emulated restored volume's profile, ceiling, first-touch latency, hydration and counters,
or why the run had none. A run in AWS has no such object and its findings no such section.
On a local run the stand-in RDS instance is moto's: its facts are the emulated configuration
(labelled as emulated) or, without emulation, not the database's at all and left out.
"""

from __future__ import annotations

from typing import Any

STAND_IN_KEEPS = ("engine", "engine_family", "engine_version", "db_name")


def storage_emulation(evidence: dict[str, Any] | None, read_rate_mib_s: float | None) -> dict[str, Any] | None:
    """The evidence, with the warm-up's end-to-end rate set against the emulated ceiling."""
    if evidence is None:
        return None
    section = dict(evidence)
    ceiling = section.get("ceiling_mib_per_s")
    if section.get("emulated") and read_rate_mib_s is not None and ceiling:
        section["warmup_mib_per_s"] = read_rate_mib_s
        section["warmup_to_ceiling"] = round(read_rate_mib_s / float(ceiling), 3)
    return section


def instance_facts(instance: dict[str, Any] | None, emulation: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the findings say about the instance: RDS's facts, the emulated ones, or only the engine."""
    if emulation is None or instance is None:
        return instance
    if emulation.get("emulated"):
        return {**instance, "emulated": True}
    kept = {k: v for k, v in instance.items() if k in STAND_IN_KEEPS}
    return {**kept, "stand_in": f"a local run: instance class and storage are not known ({emulation.get('reason')})"}
