"""What a run's findings look like to people: one view model, rendered as HTML, Markdown and terminal lines."""

from cutover_prep.report.html import render_report
from cutover_prep.report.markdown import summary_markdown

__all__ = ["render_report", "summary_markdown"]
