"""Starting a run when RDS finishes a restore of an opted-in instance (events and a scheduled sweep)."""
