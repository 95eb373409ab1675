"""The findings as the report reads them: the typed ``Findings`` record (``dal.records.findings``), pure.

Every renderer takes a ``Findings`` or a stored mapping (``findings.json`` as read); a mapping is read through
``Findings.read``, which upgrades the document of an older run. The report never refuses a run's evidence: a
value the record does not accept (a findings.json edited by hand, a truncated file) is left out of what the report
reads and logged, so the page shows what is left and says what was not measured, as it always did. A document
written by a newer schema than this code knows is refused (``NewerRecord``): the page then says so.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from cutover_prep.dal.records.findings import Findings
from cutover_prep.report.parts import ReportFindings, present

logger = logging.getLogger(__name__)

__all__ = ["Readable", "findings_of", "present"]

# what every renderer takes: the record, or findings.json as stored (read through the record at once, here)
Readable = Findings | Mapping[str, Any]

REQUIRED_TEXT = ("run_id", "status")  # a document without them (none Finalize writes) reads with them empty
MOST_PASSES = 20


def findings_of(document: Readable | Any) -> ReportFindings:
    """The findings of a record or a stored mapping as the report reads them (``parts.ReportFindings``); anything
    else reads as empty findings."""
    if isinstance(document, ReportFindings):
        return document
    if isinstance(document, Findings):
        document = document.stored()
    doc: dict[str, Any] = copy.deepcopy(dict(document)) if isinstance(document, Mapping) else {}
    if not isinstance(doc.get("schema_version", 1), int) or isinstance(doc.get("schema_version"), bool):
        doc.pop("schema_version")
    for _ in range(MOST_PASSES):
        try:
            return ReportFindings.read(doc)
        except ValidationError as exc:
            paths = {_unread(doc, tuple(error["loc"])) for error in exc.errors()}
            for path in sorted(paths, key=_order, reverse=True):  # a list's later items first: indices hold
                _leave_out(doc, path)
            logger.warning("findings: values the record does not read were left out of the report: %s",
                           "; ".join(".".join(map(str, p)) or "(the document)" for p in sorted(paths, key=_order)))
    return ReportFindings.read({name: "" for name in REQUIRED_TEXT})


def _unread(doc: dict[str, Any], loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """The path of the value an error of the record names: the deepest part of ``loc`` the document holds (a
    missing field: the object that lacks it; a union's member names are not in the document)."""
    here: Any = doc
    path: list[Any] = []
    for part in loc:
        if isinstance(here, dict) and part in here or isinstance(here, list) and isinstance(part, int) \
                and 0 <= part < len(here):
            here = here[part]
            path.append(part)
        else:
            break
    return tuple(path) if path else tuple(loc[:1])


def _order(path: tuple[Any, ...]) -> tuple[tuple[int, Any], ...]:
    return tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in path)


def _leave_out(doc: dict[str, Any], path: tuple[Any, ...]) -> None:
    """Leave the value at ``path`` out of the document; a required text at the top is read empty."""
    if len(path) == 1 and path[0] in REQUIRED_TEXT and path[0] not in doc:
        doc[path[0]] = ""
        return
    container: Any = doc
    for part in path[:-1]:
        container = container[part]
    if isinstance(container, dict):
        container.pop(path[-1], None)
    elif isinstance(container, list) and isinstance(path[-1], int) and path[-1] < len(container):
        container.pop(path[-1])

