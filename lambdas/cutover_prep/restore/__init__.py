"""A restore and what RDS says about it: ``rds`` (restore from a snapshot, describe the instance, free
storage), ``progress`` (RDS's storage initialization progress samples, Blue/Green green-instance
detection) and ``trigger`` (starting a run when RDS finishes a restore of an opted-in instance: events
and a scheduled sweep).

Import each from its module: this package imports none of them.
"""
