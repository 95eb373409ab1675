"""A run's findings: the document (``document``), closing the run (``finalize``) and failures (``failures``)."""

from cutover_prep.findings.document import SCHEMA_VERSION, benchmark_section, build_findings
from cutover_prep.findings.failures import cause_message, record_failure, record_unit_failure
from cutover_prep.findings.finalize import finalize, judge

__all__ = ["SCHEMA_VERSION", "benchmark_section", "build_findings", "cause_message", "finalize", "judge",
           "record_failure", "record_unit_failure"]
