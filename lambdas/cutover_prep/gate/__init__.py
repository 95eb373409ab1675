"""The cutover gate: "can we switch now?", one answer from three places (issue 36 §2).

A gate is open when every condition the user named is open: the run's verdict READY (or the hot set warm,
when asked), RDS's own storage initialization finished on every volume with nothing pending on the
instance, and the replication that carries the last writes caught up (an AWS DMS task, or native
replication on the target). Each condition is ``open``, ``closed`` (with why) or ``unknown`` (it could not
be checked: say what blocked it). ``evaluate`` judges once; ``cli/gate.py`` waits on it and
``statemachines/gate.asl.json`` waits with Wait states. Nothing here writes to a database.
"""
