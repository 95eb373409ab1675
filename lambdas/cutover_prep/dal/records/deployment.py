"""Records of the run table that belong to the deployment, not to one run: the restore trigger's claims,
rejections and profiles, a comparison's record, a cached price.

Each is the item as the code stores it today (see ``run.TableItem``), with a ``schema_version`` when it
is written whole (a claim, a rejection, a profile, a price, a comparison when it starts); an item without
one is version 1.

Keys (``dal.deployment``): claim ``RESTORE#<restore>``/``RESTORE``; rejection ``RESTORE#<restore>``/
``REJECTED#<digest>``; profile ``PROFILE#<name>``/``PROFILE``; comparison ``COMPARISON#<id>``/
``COMPARISON``; price ``PRICE#<key>``/``PRICE``.

An instance a comparison's cleanup or the reaper deleted, left or kept is an ``InstanceOutcome`` (with the
``Proof`` that it was the comparison's own): its entries in the comparison's record (``reaped``,
``reaper_left``) and in comparison.json's cleanup details.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from cutover_prep.dal.records.run import Number, TableItem
from cutover_prep.workflows import TABLE_TTL_ATTRIBUTE


class RestoreClaim(TableItem):
    """One run per restore: the trigger's conditional put claims it (CLAIMED), the started execution
    confirms it (STARTED, with its ARN)."""

    via: str | None = None  # the RDS event id, or "schedule"
    status: str | None = None  # CLAIMED or STARTED
    claimed_at: str | None = None
    execution_arn: str | None = None


class RestoreRejection(TableItem):
    """A restore the trigger rejected for one reason (told once)."""

    why: str
    via: str | None = None
    rejected_at: str | None = None


class ProfileItem(TableItem):
    """A stored run profile (``dal.profiles``): ``input`` the profile's JSON."""

    input: str | None = None  # None: an item stored by hand without it (read as a broken profile)
    # updated_at: TableItem's


class ComparisonRestore(BaseModel):
    """A comparison's child run's entry for the instance it restores, written before its restore starts."""

    model_config = ConfigDict(extra="allow")

    run_id: str | None = None
    claimed_at: str | None = None
    execution_arn: str | None = None


class ComparisonItem(TableItem):
    """A comparison's record (``comparison.workflow``): status, execution, the instances its child runs
    restore (``restores``: identifier -> ``{run_id, claimed_at, execution_arn}``, ``comparison.ownership``),
    cleanup, and what the reaper deleted or left."""

    comparison_id: str
    status: str | None = None
    step: str | None = None
    execution_arn: str | None = None
    execution_name: str | None = None
    started_at: str | None = None
    snapshot_identifier: str | None = None
    ttl_hours: Number | None = None
    configurations: list[str] | None = None
    instances: list[str] | None = None
    restores: dict[str, ComparisonRestore] | None = None
    recommendation: str | None = None
    cleanup: ComparisonCleanup | None = None
    reaped: list[InstanceOutcome] | None = None
    reaper_left: list[InstanceOutcome] | None = None
    reaped_at: str | None = None

    def restore_of(self, identifier: str) -> ComparisonRestore | None:
        """The entry a child run wrote for ``identifier`` before it restored it, or None."""
        return (self.restores or {}).get(identifier)


class PriceItem(TableItem):
    """A price the Price List API gave, cached for ``CACHE_DAYS`` (DynamoDB expires it by ``expires_at``)."""

    usd: Number
    fetched: str
    expires_at: Number = Field(alias=TABLE_TTL_ATTRIBUTE)


class Proof(BaseModel):
    """Why an instance is the comparison's own: its record's entry, its tags, its creation after the start."""

    record: str
    tags: dict[str, str]
    created: str
    comparison_started: str


class InstanceOutcome(BaseModel):
    """What became of one instance: deleted (RDS's status, no final snapshot, the proof), or left or kept (why).
    Written with the fields it was given only (``exclude_unset``), in this order (comparison.json, the
    comparison's record)."""

    db_instance_identifier: str
    comparison_id: str | None = None  # the reaper's: the comparison its tag names
    status: str | None = None
    final_snapshot: str | None = None
    proof: Proof | None = None
    age_hours: float | None = None
    ttl_hours: float | None = None
    why: str | None = None
    transient: bool | None = None  # left: worth asking again later


class ComparisonCleanup(BaseModel):
    """The comparison record's ``cleanup`` (``comparison.model.Cleanup`` as the workflow wrote it): the
    instances deleted, left and not the comparison's, and each one's outcome."""

    model_config = ConfigDict(extra="allow")

    deleted: list[str] = []
    left: list[str] = []
    not_ours: list[str] = []
    details: list[InstanceOutcome] = []
