"""The steps of a run that compose the phases: ValidateInput (``validate_input``, ``warm_concurrency``),
Preflight (``preflight``), EndCensus (``end_census``) and Finalize (``finalize``). A step may import any
phase; no phase imports a step.
"""
