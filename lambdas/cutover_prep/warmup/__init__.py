"""The warm-up: discover and plan the work units (discovery.py, planning.py), read one unit within a Lambda's
time (unit.py)."""
