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

from dataclasses import dataclass, field, fields
from typing import Any

DEPLOYED_ONLY = {"restore": "a restore from a snapshot is a deployed run's (the local run reads the database "
                            "--dsn names)",
                 "comparison": "a comparison's child run is started by the deployed comparison workflow"}
LOCAL_BENCHMARK = {"metrics_wait_minutes": 0,  # moto has no CloudWatch datapoints: recorded missing at once
                   "compare_limits": False}  # the local stand-in instance's class is not the database's


class InputFileProblem(Exception):
    """The file cannot be a local run's input: one line."""


@dataclass(frozen=True)
class Sections:
    """The run input's sections a local run sets, as its user gave them: JSON objects (the flags, a file, a
    comparison's input), parsed once, whole, where every run input is (``models.run_input.parse_run_input``: the
    local run's check of its options, then the workflow's ValidateInput). Empty: the model's defaults."""

    warmup: dict[str, Any] = field(default_factory=dict)
    benchmark: dict[str, Any] = field(default_factory=dict)
    verdict: dict[str, Any] = field(default_factory=dict)
    preflight: dict[str, Any] = field(default_factory=dict)


TAKEN = tuple(f.name for f in fields(Sections))  # the sections of a run input a local run takes from the file


@dataclass(frozen=True)
class LocalInput:
    """What ``--input`` and the flags make: the sections, the run id (None: the command's default) and the lines
    that say what the file did not decide."""

    sections: Sections
    run_id: str | None = None
    notes: list[str] = field(default_factory=list)


def local_sections(data: dict[str, Any] | None, path: str, *, defaults: Sections, given: Sections,
                   run_id: str | None) -> LocalInput:
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
    for name in TAKEN:
        if data.get(name) is not None and not isinstance(data[name], dict):
            raise InputFileProblem(f"--input {path}: {name} must be an object (see schema/run-input.schema.json)")
    sections = Sections(**{name: {**getattr(defaults, name), **(data.get(name) or {}), **getattr(given, name)}
                           for name in TAKEN})
    sections.benchmark.update(LOCAL_BENCHMARK)
    file_run_id = data.get("run_id")
    if file_run_id is not None and not isinstance(file_run_id, str):
        raise InputFileProblem(f"--input {path}: run_id must be a string")
    notes = [f"--input {path}: its target is not used; the local run reads the database --dsn names "
             "(or the demo's)"] if data.get("target") is not None else []
    return LocalInput(sections, run_id if run_id is not None else file_run_id, notes)
