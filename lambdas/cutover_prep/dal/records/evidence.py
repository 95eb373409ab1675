"""The catalogue of a run's evidence objects in S3: each one's name under ``runs/<run_id>/`` and what it holds.

Every object a run, a comparison or Finalize writes or reads is named here once; code names the object
(``evidence.FINDINGS``), never its file name, and ``key(run_id, FINDINGS)`` is where it is
(``runs/<run_id>/findings.json``). A name is a plain ``str`` (the names are what older runs stored, so they
never change); ``CATALOGUE`` says for each what it holds and who writes it (``docs``, the tests).
"""

from __future__ import annotations

from dataclasses import dataclass

PREFIX = "runs/"


@dataclass(frozen=True)
class Evidence:
    """One evidence object: its name under the run's prefix, content type, what it holds, the module writing it."""

    name: str
    content_type: str
    holds: str
    writer: str


JSON, JSON_LINES, MARKDOWN, HTML, CSV = ("application/json", "application/x-ndjson", "text/markdown",
                                         "text/html; charset=utf-8", "text/csv")

# -- the run's plan and censuses (Discover, EndCensus) ---------------------------------------------------------
PLAN = "plan.json"
UNITS = "units.json"
PLAN_SEGMENTS = "plan-segments.jsonl"
CENSUS_START = "census-start.jsonl"
CENSUS_END = "census-end.jsonl"
CENSUS_END_SUMMARY = "census-end.json"
CENSUS_UNREAD = "census-unread.jsonl"
DISCOVERY_PAGES = "discovery-pages/"  # a prefix: one object a page of the catalogue (``discovery-pages/<n>.json``)
PREFLIGHT = "preflight.json"
STORAGE_EMULATION = "storage-emulation.json"
# -- the benchmark -------------------------------------------------------------------------------------------
PROBE_SAMPLE = "probes/sample.json"
PROBE_SAMPLE_WARM = "probes/sample-warm.json"
SWEEP_PLAN = "sweep/plan.json"
SWEEP_POINTS_CSV = "sweep/points.csv"
CLOUDWATCH = "metrics/cloudwatch.json"
ENHANCED_MONITORING = "metrics/enhanced.json"
ANALYSIS = "analysis.json"
# -- Finalize ------------------------------------------------------------------------------------------------
FINDINGS = "findings.json"
SUMMARY = "summary.md"
REPORT = "report.html"
SEGMENTS = "segments.jsonl"
ETA_REPLAY = "warmup/eta_replay.json"
FAILURE = "failure.json"
# -- a comparison (under runs/<comparison_id>/) ---------------------------------------------------------------
COMPARISON_INPUT = "input.json"
COMPARISON = "comparison.json"
COMPARISON_PAGE = "comparison.html"


def probe(phase: str) -> str:
    """A probe's measurement: ``probes/cold.json`` or ``probes/warm.json``."""
    return f"probes/{phase}.json"


def sweep_point(point_id: str) -> str:
    """One sweep point's measurement."""
    return f"sweep/points/{point_id}.json"


def discovery_page(page: int | str) -> str:
    return f"{DISCOVERY_PAGES}{page}.json"


def key(run_id: str, name: str) -> str:
    """The S3 key of evidence ``name`` of run (or comparison) ``run_id``."""
    return f"{PREFIX}{run_id}/{name}"


def uri(bucket: str, run_id: str, name: str) -> str:
    return f"s3://{bucket}/{key(run_id, name)}"


CATALOGUE: tuple[Evidence, ...] = (
    Evidence(PLAN, JSON, "the plan: its summary and units (``Plan``)", "warmup.discovery"),
    Evidence(UNITS, JSON, "the Map's items: a JSON array, one unit a line", "warmup.discovery"),
    Evidence(PLAN_SEGMENTS, JSON_LINES, "the plan's segments, one a line", "warmup.discovery"),
    Evidence(CENSUS_START, JSON_LINES, "the volume's census when the warm-up starts", "warmup.discovery"),
    Evidence(CENSUS_END, JSON_LINES, "the volume's census when the warm-up ends", "warmup.end_census"),
    Evidence(CENSUS_END_SUMMARY, JSON, "the end census's summary (or why it could not be taken)", "warmup.end_census"),
    Evidence(CENSUS_UNREAD, JSON_LINES, "every object the warm-up did not read", "findings.finalize"),
    Evidence(DISCOVERY_PAGES, JSON, "the catalogue read in pages (a prefix: one object a page)", "warmup.discovery"),
    Evidence(PREFLIGHT, JSON, "the Preflight state's report, one entry a check", "preflight.step"),
    Evidence(STORAGE_EMULATION, JSON, "the emulated restored volume's evidence", "local (cutover-prep local)"),
    Evidence(PROBE_SAMPLE, JSON, "the blocks the cold probe samples", "benchmark.steps"),
    Evidence(PROBE_SAMPLE_WARM, JSON, "the blocks the warm probe samples", "benchmark.steps"),
    Evidence(probe("cold"), JSON, "the cold probe's measurement", "benchmark.steps"),
    Evidence(probe("warm"), JSON, "the warm probe's measurement", "benchmark.steps"),
    Evidence(SWEEP_PLAN, JSON, "the sweep's points", "benchmark.steps"),
    Evidence(sweep_point("<point_id>"), JSON, "one sweep point's measurement", "benchmark.steps"),
    Evidence(SWEEP_POINTS_CSV, CSV, "the sweep points, one row a point", "benchmark.evidence"),
    Evidence(CLOUDWATCH, JSON, "CloudWatch's metrics over each point's window", "benchmark.evidence"),
    Evidence(ENHANCED_MONITORING, JSON, "Enhanced Monitoring's samples over the benchmark", "benchmark.evidence"),
    Evidence(ANALYSIS, JSON, "the benchmark's analysis: limits, crossover, conclusions", "benchmark.evidence"),
    Evidence(FINDINGS, JSON, "the run's findings (``Findings``)", "findings.finalize"),
    Evidence(SUMMARY, MARKDOWN, "the findings as Markdown", "findings.finalize"),
    Evidence(REPORT, HTML, "the findings as a page", "findings.finalize"),
    Evidence(SEGMENTS, JSON_LINES, "what Finalize found of each planned segment", "findings.finalize"),
    Evidence(ETA_REPLAY, JSON, "what the warm-up's ETA was judged on, replayable", "findings.finalize"),
    Evidence(FAILURE, JSON, "the error and cause of a failed run", "findings.failures"),
    Evidence(COMPARISON_INPUT, JSON, "a comparison's validated input", "comparison.workflow"),
    Evidence(COMPARISON, JSON, "a comparison's result: each configuration, the recommendation, the cleanup",
             "comparison.workflow"),
    Evidence(COMPARISON_PAGE, HTML, "a comparison's result as a page", "comparison.workflow"),
)
