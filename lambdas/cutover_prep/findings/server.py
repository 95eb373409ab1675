"""The findings' ``server`` section: did the database restart under the run?

Discover and the end census each read when the server last started (``engines.registry.server_started``: PostgreSQL's
``pg_postmaster_start_time()``, MySQL/MariaDB's clock less ``Uptime``, Oracle's ``V$INSTANCE.STARTUP_TIME``). The two
differ when it restarted in between: a reboot, a crash, or a Multi-AZ failover. The run rides a restart out (issue 32
§4), and what the warm-up read of the volume stays read, but the server's buffer cache starts empty again, and a
failover serves the database from the standby's volume, which this run did not read. The section says so; it does
not judge (the verdict's SERVER_RESTARTED reason carries the note).
"""

from __future__ import annotations

from datetime import datetime

from cutover_prep.dal.records.findings import HotSet, ServerStarts
from cutover_prep.dal.records.run import RunItem

# two readings of one start may differ this much (MySQL/MariaDB: the clock less Uptime, whole seconds each)
SAME_START_SECONDS = 2.0


def _at(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def restarted(first: str | None, last: str | None) -> bool | None:
    """Whether two start times are two starts (None: either is unknown or unreadable)."""
    a, b = (_at(first) if first else None), (_at(last) if last else None)
    if a is None or b is None or (a.tzinfo is None) != (b.tzinfo is None):
        return None
    return abs((b - a).total_seconds()) > SAME_START_SECONDS


def server_section(run: RunItem, hot_set: HotSet | None = None) -> ServerStarts:
    """The section from the run item's two readings; the note names the hot set's buffer fill when the restart came
    after the hot set was read into the buffer cache."""
    first, last = run.server_started_at, run.server_started_at_end
    again = restarted(first, last)
    note = None
    if again:
        note = (f"the database server restarted during the run (started {first}, then {last}): its buffer cache "
                "started empty again")
        warm_at = _at(hot_set.warm_at) if hot_set is not None and hot_set.buffer_cache and hot_set.warm_at else None
        end = _at(last or "")
        if warm_at is not None and end is not None and warm_at.tzinfo and end.tzinfo and warm_at < end:
            note += (", so the hot set read into it before the restart is no longer there (it is still read on "
                     "the volume)")
        note += ("; the blocks read stay read on the same volume, but a Multi-AZ failover serves the database from the "
                 "standby's volume, which this run did not read: check the instance's events for a failover")
    return ServerStarts(started_at=first, started_at_end=last, restarted=again, note=note)
