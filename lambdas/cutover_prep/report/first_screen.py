"""What report.html shows before any scrolling (pure): the verdict, the figures that decide it, the
warm-up chart and what to do next. Everything else of the page folds below it (``templates/report.html.j2``).

The figures are ``view.build_view``'s ``figures`` (``engineer.headline_figures``), chosen, never formatted
again: the first screen cannot say a figure the rest of the evidence words otherwise. The fix for each
NOT_READY reason comes from ``cutover_prep.models.verdict_reasons``, the one table of reasons and fixes.
"""

from __future__ import annotations

from cutover_prep.models.verdict_reasons import what_to_do
from cutover_prep.report.view_model import Figure, FirstScreen, NextSteps, VerdictView, View

# The figures that decide a verdict, by the words of their labels, in this order: coverage (COVERAGE), the
# cold → warm median read (WARM_VS_COLD), the warm-up's time and the best random-read IOPS (what the cutover
# will get). A figure a run did not measure gives its place to the next one of the headline figures.
DECIDING = (("coverage",), ("cold", "warm"), ("warm-up time",), ("random-read", "iops"))
FIRST_SCREEN_FIGURES = 4
FIRST_SCREEN_REASONS = 2  # more failing reasons than this: counted here, each with its fix in the checks below


def _matches(label: str, words: tuple[str, ...]) -> bool:
    label = label.lower()
    return all(w in label for w in words)


def deciding_figures(figures: list[Figure]) -> list[Figure]:
    """At most four of the headline figures: those that decide the verdict first, then the others in order."""
    chosen: list[Figure] = []
    for words in DECIDING:
        found = next((f for f in figures if f not in chosen and _matches(str(f["label"]), words)), None)
        if found is not None:
            chosen.append(found)
    chosen += [f for f in figures if f not in chosen]
    return chosen[:FIRST_SCREEN_FIGURES]


def next_steps(verdict: VerdictView, status: str) -> NextSteps:
    """"What to do next": each failing reason with its fix (NOT_READY), the cutover (READY), or why there is no
    verdict. ``verdict`` is ``build_view``'s ``verdict``."""
    failing = verdict["failing"]
    if verdict["name"] == "NOT_READY" or failing:
        items = [{"code": str(r["code"] or "—"), "message": str(r["message"] or ""),
                  "fix": what_to_do(str(r["code"]))} for r in failing]
        lead = (f"Fix {'this' if len(items) == 1 else f'these {len(items)}'} and run again:" if items
                else "The verdict is NOT_READY but names no reason: read the checks below and run again.")
        return {"css": "not-ready", "lead": lead, "reasons": items[:FIRST_SCREEN_REASONS],
                "more": max(0, len(items) - FIRST_SCREEN_REASONS),
                "more_codes": [r["code"] for r in items[FIRST_SCREEN_REASONS:]]}
    if verdict["name"] == "READY":
        unjudged = len(verdict["not_judged"])
        lead = ("Ready to cut over: every check passed. Keep this report and findings.json beside it with "
                "the change record.")
        notes = ([f"{unjudged} check{'s' if unjudged > 1 else ''} could not be judged on this run's evidence: read "
                  f"{'them' if unjudged > 1 else 'it'} under \"Not judged\" below before the cutover."]
                 if unjudged else [])
        # a check that passed on an allowance of its rule says how, in its own words ("passed ..."), here too
        notes += [f"{r['code']} {r['exception']}" for r in verdict["passing"] if r["exception"]]
        return {"css": "ready", "lead": lead, "reasons": [], "notes": notes, "more": 0}
    return {"css": "none", "lead": f"No verdict: the run ended {status} before it was judged. Read its status and "
            "failure.json in the run's evidence, fix the error named there and run again.", "reasons": [], "more": 0}


def first_screen(view: View) -> FirstScreen:
    """The first screen's parts from the view model."""
    return {"figures": deciding_figures(view["figures"]), "next": next_steps(view["verdict"], str(view["status"]))}
