"""A run's findings: the document (``document``), closing the run (``finalize``) and failures (``failures``).

Import each from its module: this package imports none of them, so a step that records a failure
(``failures``) does not load the report renderer that ``finalize`` uses.
"""
