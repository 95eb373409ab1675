"""``cutover-prep local --input FILE``: a full run input (the deployed run's model, ``models.run_input.RunInput``)
for a local run, with the command's flags over it, so every option of a run (the verdict's rules among them) can
be set locally.

What the local run takes from the file: ``warmup``, ``benchmark``, ``verdict``, ``preflight`` and ``run_id``.
Its ``target`` names an RDS instance and a secret the local run does not use: the database is the one ``--dsn``
names (or the demo's), said in one line. ``restore`` and ``comparison`` belong to a deployed run: refused by name.
Flags given on the command line win over the file; the file wins over the flags' defaults. Two benchmark settings
are the local run's own whatever the file says (moto has no CloudWatch and the stand-in instance's class is not
the database's): ``metrics_wait_minutes`` 0 and ``compare_limits`` false.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# the sections of a run input a local run takes from the file
TAKEN = ("warmup", "benchmark", "verdict", "preflight")
DEPLOYED_ONLY = {"restore": "a restore from a snapshot is a deployed run's (the local run reads the database "
                            "--dsn names)",
                 "comparison": "a comparison's child run is started by the deployed comparison workflow"}
LOCAL_BENCHMARK = {"metrics_wait_minutes": 0,  # moto has no CloudWatch datapoints: recorded missing at once
                   "compare_limits": False}  # the local stand-in instance's class is not the database's


class InputFileProblem(Exception):
    """The file cannot be a local run's input: one line."""


@dataclass
class Sections:
    """The run input's sections for the local run, and the lines that say what the file did not decide."""

    warmup: dict[str, Any] = field(default_factory=dict)
    benchmark: dict[str, Any] = field(default_factory=dict)
    verdict: dict[str, Any] = field(default_factory=dict)
    preflight: dict[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    notes: list[str] = field(default_factory=list)


def _section(data: dict[str, Any], name: str, path: str) -> dict[str, Any]:
    value = data.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputFileProblem(f"--input {path}: {name} must be an object (see schema/run-input.schema.json)")
    return dict(value)


def local_sections(data: dict[str, Any] | None, path: str, *, defaults: dict[str, dict[str, Any]],
                   given: dict[str, dict[str, Any]], run_id: str | None) -> Sections:
    """The sections of the local run: ``defaults`` (the flags' defaults), then the file's ``data``, then ``given``
    (the flags typed on the command line), per key of each section; ``run_id``: ``--run-id`` (wins over the
    file's). Nothing here validates the values: the run input's model does, as for every run."""
    data = data or {}
    for name, why in DEPLOYED_ONLY.items():
        if data.get(name) is not None:
            raise InputFileProblem(f"--input {path}: {name}: {why}; remove it for a local run")
    unknown = sorted(set(data) - {*TAKEN, "target", "run_id", *DEPLOYED_ONLY})
    if unknown:  # the model would refuse them too; said here with the file's name
        raise InputFileProblem(f"--input {path}: {', '.join(unknown)}: not a run input's section "
                               f"(see schema/run-input.schema.json)")
    out = Sections()
    for name in TAKEN:
        merged = {**defaults.get(name, {}), **_section(data, name, path), **given.get(name, {})}
        setattr(out, name, merged)
    out.benchmark.update(LOCAL_BENCHMARK)
    file_run_id = data.get("run_id")
    if file_run_id is not None and not isinstance(file_run_id, str):
        raise InputFileProblem(f"--input {path}: run_id must be a string")
    out.run_id = run_id if run_id is not None else file_run_id
    if data.get("target") is not None:
        out.notes.append(f"--input {path}: its target is not used; the local run reads the database --dsn names "
                         "(or the demo's)")
    return out
