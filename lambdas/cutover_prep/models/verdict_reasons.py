"""Every verdict reason and every named run error: what it means and what to do (pure, the one source).

``REASONS`` holds each ``code`` that ``verdict.judge`` can give (``verdict.reasons[].code`` in findings.json);
``RUN_ERRORS`` each named error a failed run ends with (``findings.failures.KNOWN_ERRORS`` and the two names
``record_failure`` maps the rest to). The report's "What to do next" reads them through ``what_to_do``; the docs'
table is ``markdown_table()``. A unit test keeps both in step with the code that gives the codes and errors.
"""

from __future__ import annotations

from typing import NamedTuple


class Guide(NamedTuple):
    means: str  # what the reason or error says about the run, when it fails
    to_do: str  # what the DBA does about it
    can_fail: bool = True  # False: a reason that is only ever said ("Not judged"), never a failure


REASONS: dict[str, Guide] = {
    "UNITS_FAILED": Guide(
        "a work unit failed: the bytes it was to read were not all read",
        "read each failed unit's error (Warm-up in detail → Failed units); grant what a privilege error names, "
        "then run again (a lost connection or a lock wait usually clears)"),
    "UNITS_NOT_FINISHED": Guide(
        "a work unit was cut off or never started (the run was stopped or ended early)",
        "run again and let it finish; if a unit keeps being cut off, lower warmup.chunk_mb or warmup.unit_mb so "
        "each call ends well inside the time limit"),
    "WARMUP_OFF": Guide(
        "the run read nothing before measuring (warmup.enabled false): the first touch of every block is still "
        "ahead, so the database is never ready after such a run",
        "run again with warmup.enabled true (the default) before the cutover; keep false only to measure the "
        "storage as restored"),
    "NOTHING_PLANNED": Guide(
        "the plan holds nothing to read: the database is empty or the selection matched nothing",
        "check that the DSN or target names the right database and that warmup.databases / include_schemas / "
        "exclude_schemas match it (cutover-prep estimate shows what they select)"),
    "COVERAGE": Guide(
        "fewer planned bytes were read than verdict.min_coverage_pct asks (100 % by default), or no coverage was "
        "recorded",
        "see what was left and why (Warm-up in detail → Units not read); fix that and run again; lower "
        "verdict.min_coverage_pct only for data the application never reads"),
    "UNREAD_OBJECTS": Guide(
        "the census of the volume holds objects the run did not read, above verdict.max_unread_bytes (0), or of "
        "unknown size",
        "'no privilege': GRANT SELECT to the run's user; not read or grown since: run again; never read by the "
        "application: leave it out (warmup.databases / include_schemas / exclude_schemas) or raise "
        "verdict.max_unread_bytes"),
    "ENGINE_INTERNAL": Guide(
        "only with verdict.engine_internal strict: the engine's own files no SQL reads (InnoDB's system, undo and "
        "temporary tablespaces, free extents) are not known to be initialized: RDS did not report the whole volume "
        "initialized by the end of the run",
        "wait until RDS reports no StorageOperationStatus and run again, or set verdict.engine_internal named (the "
        "default: named with their bytes, not failing)"),
    "END_CENSUS": Guide(
        "the census after the warm-up did not run, so what was created or grew during the warm-up is not known",
        "run again; if the error named in the reason repeats, fix it (DatabaseUnreachable: network or "
        "credentials; LockWaitTimeout: the session holding the lock)"),
    "BENCHMARK": Guide(
        "the benchmark was asked for and is not complete: it failed, ended PARTIAL, or a point was not measured",
        "read the failed points' causes (Benchmark → Sweep points) and run again; or set "
        "verdict.require_benchmark false to judge the run on its warm-up alone"),
    "SCRATCH_LEFT": Guide(
        "the opt-in write test left a scratch object in the database",
        "drop the named object after checking it holds only the run's scratch data"),
    "PROBES_MISSING": Guide(
        "the cold or the warm probe did not finish or has no latency figures, so warm vs cold cannot be judged",
        "read the probe's cause (Benchmark → Cold vs warm) and run again; benchmark.probe_blocks 0 turns the "
        "probes off (then warm vs cold is not judged)"),
    "FAILED_OVER": Guide(
        "the instance failed over (Multi-AZ) during the run: the database is served from the standby's volume, which "
        "the run did not read",
        "run again on the new primary, after the failover"),
    "SERVER_RESTARTED": Guide(
        "never fails: the database server restarted during the run, so its buffer cache is cold again; a Multi-AZ "
        "failover would serve the database from the standby's volume, which the run did not read",
        "check the instance's events: after a failover, run again on the new primary", False),
    "PROBES_OFF": Guide(
        "never fails: the probes were turned off (benchmark.probe_blocks 0), so warm vs cold is not judged",
        "nothing, unless you want warm vs cold judged: leave benchmark.probe_blocks at its default", False),
    "PROBES_COLD": Guide(
        "never fails: with the warm-up off there is no warm-up between the probes to judge",
        "nothing; it goes with WARMUP_OFF", False),
    "WARM_VS_COLD": Guide(
        "after the warm-up, single-block reads are slower than cold, or still read at first-touch speed: the "
        "warm-up did not reach the sampled blocks, or they were evicted, or the instance was busy",
        "look at the warm probe's histogram (Benchmark); if blocks were left unread, read them and run again; "
        "else run again on an idle instance, closer to the cutover"),
    "WARM_P99": Guide(
        "the warm probe's p99 read is above verdict.max_warm_p99_ms, or there is no warm probe to hold to it",
        "run again on an idle instance; raise verdict.max_warm_p99_ms only if the application tolerates that "
        "tail"),
    "WARM_TAIL": Guide(
        "never fails: the warm probe's slowest read was at least twice the cold probe's slowest",
        "look at the warm probe's histogram; set verdict.max_warm_p99_ms to judge the tail", False),
    "EXPECTED_IOPS": Guide(
        "the best random-read IOPS is below verdict.expected_read_iops less verdict.tolerance_pct, or was not "
        "measured",
        "compare the instance class and storage with the limits (Instance and storage): raise the provisioned "
        "IOPS or the class, or correct verdict.expected_read_iops"),
    "EXPECTED_THROUGHPUT": Guide(
        "the best read MiB/s is below verdict.expected_read_mibps less verdict.tolerance_pct, or was not measured",
        "compare the instance class and storage with the limits (Instance and storage): raise the provisioned "
        "throughput or the class, or correct verdict.expected_read_mibps"),
    "BASELINE": Guide(
        "the baseline run (verdict.baseline_run_id) has no findings or no benchmark points to compare with",
        "name a finished run with a benchmark in verdict.baseline_run_id, or remove it"),
    "BASELINE_IOPS": Guide(
        "the best random-read IOPS is below the baseline run's less verdict.tolerance_pct",
        "compare this run's instance class and storage with the baseline's (Instance and storage); match them, "
        "or run again when the instance is idle"),
    "BASELINE_THROUGHPUT": Guide(
        "the best read MiB/s is below the baseline run's less verdict.tolerance_pct",
        "compare this run's instance class and storage with the baseline's (Instance and storage); match them, "
        "or run again when the instance is idle"),
    "STORAGE_INITIALIZING": Guide(
        "with verdict.require_storage_initialized, RDS still reports a storage operation (or could not be asked) "
        "at the end of the run",
        "wait until RDS reports no StorageOperationStatus and run again, or set "
        "verdict.require_storage_initialized false"),
    "OVERSIZED_SEGMENTS": Guide(
        "a segment too big for one work unit (an Oracle index or LOB segment) was not read",
        "use warmup.mode both, so the datafile pass reads it, and let the run finish"),
}

RUN_ERRORS: dict[str, Guide] = {
    "InvalidInput": Guide("the run input was refused before the run started",
                          "fix the field the error names; cutover-prep validate --input FILE checks it first"),
    "RunIdReused": Guide("a run with this run id exists already", "choose another run id, or leave it out"),
    "RestoreFailed": Guide("RDS could not restore the instance from the snapshot",
                           "read RDS's event for the instance, fix it (quota, subnet group, KMS key) and start again"),
    "RestoreTimeout": Guide("the restored instance did not become available in time",
                            "check the instance in the RDS console; raise restore.max_wait_minutes (180), or start "
                            "again once it is available"),
    "DatabaseUnreachable": Guide("the run could not connect to the database",
                                 "check the endpoint, port, security groups and the secret's credentials; "
                                 "cutover-prep preflight checks them"),
    # raised when the secret does not NAME the target (access/connection.py, access/secret_binding.py); a secret
    # without the
    # cutover-prep:access tag is refused by IAM instead (AccessDenied on GetSecretValue: DatabaseUnreachable)
    "SecretNotBound": Guide("the secret does not name the target instance (or its snapshot's source); nothing "
                            "connected",
                            "make the secret name the target instance (dbInstanceIdentifier, or host = its "
                            "endpoint), or the instance whose snapshot the run restores; see docs/deploy.md, "
                            "'Which instance a secret belongs to'"),
    "PermanentReadError": Guide("a read failed in a way a retry cannot fix (a privilege, a corrupt block)",
                                "read the cause; grant the privilege, or exclude the object, and start again"),
    "TransientDatabaseError": Guide("the database kept failing past every retry",
                                    "check the instance's health and load, then start again"),
    "ShortRead": Guide("the database returned fewer blocks than the relation holds",
                       "start again; if it repeats, the relation changed during the run: read its cause"),
    "OverRead": Guide("Oracle: a read's physical reads exceeded its planned blocks by more than max(16 blocks, "
                      "10 %): the plan read more than its rowid range (e.g. a full scan per chunk)",
                      "run cutover-prep preflight: its 'rowid range plan' check names the plan Oracle chose; start "
                      "again once it is TABLE ACCESS BY ROWID RANGE"),
    "PreflightFailed": Guide("the preflight found a check that fails (privileges, extensions, settings)",
                             "fix what the preflight names (cutover-prep preflight shows it), or set "
                             "preflight.on_failure warn"),
    "HotSetEngineMismatch": Guide("the hot-set profile was taken on another engine",
                                  "take the profile with cutover-prep hotset on the same engine"),
    "LockWaitTimeout": Guide("a read waited too long behind a lock (e.g. a running ALTER)",
                             "start again after the DDL holding the lock has finished"),
    "ConnectionLost": Guide("the database dropped the session past warmup.reconnect_minutes",
                            "check why the instance restarted or dropped sessions, then start again"),
    "StepTimedOut": Guide("a step of the workflow ran past its time limit",
                          "start again; if it repeats, lower warmup.chunk_mb / unit_mb"),
    "CutoverPrepFailed": Guide("an error Cutover Prep has no name for",
                               "read the cause in failure.json of the run's evidence and open an issue with it"),
}


def what_to_do(code: str) -> str:
    """The fix for a verdict reason's code; a code with no entry says where to look instead of raising."""
    guide = REASONS.get(code)
    return guide.to_do if guide else f"no guidance recorded for {code}: read its message and docs/cli.md"


def markdown_table() -> str:
    """Every verdict reason and run error as one Markdown table (| code | what it means | what to do |)."""
    rows = ["| code | what it means | what to do |", "| --- | --- | --- |"]
    rows += [f"| `{code}` | {g.means} | {g.to_do} |" for code, g in REASONS.items()]
    rows += [f"| `{name}` (run error) | {g.means} | {g.to_do} |" for name, g in RUN_ERRORS.items()]
    return "\n".join(rows)
