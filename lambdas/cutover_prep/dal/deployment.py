"""The deployment's items in the run table (``records.deployment``): the restore trigger's claims, rejections
and profiles, a comparison's record, cached prices. The only code that calls DynamoDB for them.

Keys: claim ``RESTORE#<restore>``/``RESTORE``; rejection ``RESTORE#<restore>``/``REJECTED#<digest>``; profile
``PROFILE#<name>``/``PROFILE``; comparison ``COMPARISON#<id>``/``COMPARISON``; price ``PRICE#<key>``/``PRICE``.
"""

from __future__ import annotations

from typing import Any, TypeVar

from botocore.exceptions import ClientError

from cutover_prep.dal.dynamo import Key, attributes, dyn, failed_condition, item_of, key_of, now_iso, set_expression
from cutover_prep.dal.records.base import Record
from cutover_prep.dal.records.deployment import (
    ComparisonItem,
    InstanceOutcome,
    PriceItem,
    ProfileItem,
    RestoreClaim,
    RestoreRejection,
)
from cutover_prep.dal.records.run import RunItem

COMPARISON_SK = "COMPARISON"
RESTORES = "restores"  # a comparison's attribute: instance identifier -> its restore's entry
R = TypeVar("R", bound=Record)


def profile_key(name: str) -> Key:
    """A stored run profile of the restore trigger (``dal.profiles``)."""
    return key_of(f"PROFILE#{name}", "PROFILE")


def restore_claim_key(restore: str) -> Key:
    """The restore trigger's claim on one restore (one run per restore, ``restore.trigger``)."""
    return key_of(f"RESTORE#{restore}", "RESTORE")


def restore_rejection_key(restore: str, digest: str) -> Key:
    """A restore the trigger rejected for one reason (told once)."""
    return key_of(f"RESTORE#{restore}", f"REJECTED#{digest}")


def comparison_key(comparison_id: str) -> Key:
    """A comparison's record (``comparison.workflow`` writes it, ``comparison.ownership`` claims in it)."""
    return key_of(f"COMPARISON#{comparison_id}", COMPARISON_SK)


def price_key(key: str) -> Key:
    return key_of(f"PRICE#{key}", "PRICE")


class DeploymentTable:
    """The deployment's items of the run table. The client is injected (boto3 in Lambda, moto in tests)."""

    def __init__(self, *, dynamodb: Any, table: str) -> None:
        self._ddb, self.table = dynamodb, table

    # -- plumbing ------------------------------------------------------------------------------------------
    def _get(self, key: Key, record: type[R], *, consistent: bool = True) -> R | None:
        """The item under ``key`` read as ``record``; None when there is none."""
        raw = self._ddb.get_item(TableName=self.table, Key=key, ConsistentRead=consistent).get("Item")
        return record.read(item_of(raw)) if raw else None

    def _put_new(self, key: Key, record: Any) -> bool:
        """Put ``record`` under ``key`` unless an item is there; False when one was."""
        try:
            self._ddb.put_item(TableName=self.table, Item={**key, **attributes(record.stored())},
                               ConditionExpression="attribute_not_exists(pk)")
            return True
        except ClientError as exc:
            if failed_condition(exc):
                return False
            raise

    # -- the restore trigger's profiles --------------------------------------------------------------------
    def profile(self, name: str) -> ProfileItem | None:
        return self._get(profile_key(name), ProfileItem)

    def put_profile(self, name: str, input_json: str) -> None:
        item = ProfileItem.new(input=input_json, updated_at=now_iso())
        self._ddb.put_item(TableName=self.table, Item={**profile_key(name), **attributes(item.stored())})

    # -- the restore trigger's claims and rejections --------------------------------------------------------
    def claim_restore(self, restore: str, via: str) -> bool:
        """Claim ``restore`` (CLAIMED); False when it has a claim already."""
        return self._put_new(restore_claim_key(restore),
                             RestoreClaim.new(via=via, status="CLAIMED", claimed_at=now_iso()))

    def restore_claim(self, restore: str) -> RestoreClaim | None:
        return self._get(restore_claim_key(restore), RestoreClaim)

    def confirm_restore(self, restore: str, execution_arn: str) -> None:
        """The claim's run started: STARTED, with its execution."""
        self._ddb.update_item(TableName=self.table, Key=restore_claim_key(restore),
                              **set_expression({"status": "STARTED", "execution_arn": execution_arn}))

    def reject_restore(self, restore: str, digest: str, *, why: str, via: str) -> bool:
        """Record a rejection of ``restore`` for one reason; False when it was recorded already."""
        return self._put_new(restore_rejection_key(restore, digest),
                             RestoreRejection.new(why=why, via=via, rejected_at=now_iso()))

    # -- comparisons -----------------------------------------------------------------------------------------
    def comparison(self, comparison_id: str) -> ComparisonItem | None:
        return self._get(comparison_key(comparison_id), ComparisonItem)

    def start_comparison(self, record: ComparisonItem) -> bool:
        """Create the comparison's record unless another execution holds its id (False then); a retried
        StartComparison of the same execution writes it again."""
        try:
            self._ddb.put_item(TableName=self.table,
                               Item={**attributes(record.stored()), **comparison_key(record.comparison_id)},
                               ConditionExpression="attribute_not_exists(pk) OR execution_arn = :me",
                               ExpressionAttributeValues={":me": dyn(record.execution_arn or "")})
            return True
        except ClientError as exc:
            if failed_condition(exc):
                return False
            raise

    def update_comparison(self, comparison_id: str, **attrs: Any) -> None:
        self._ddb.update_item(TableName=self.table, Key=comparison_key(comparison_id),
                              **set_expression({**attrs, "updated_at": now_iso()}))

    def claim_comparison_restore(self, comparison_id: str, identifier: str, *, run_id: str, parent: str) -> bool:
        """Write in the comparison's record that run ``run_id`` restores ``identifier``, when the record is
        running, names ``parent`` as its execution and plans ``identifier`` (False otherwise)."""
        try:
            self._ddb.update_item(
                TableName=self.table, Key=comparison_key(comparison_id),
                UpdateExpression=f"SET {RESTORES}.#i = :entry",
                ConditionExpression=f"execution_arn = :parent AND #s = :running AND contains(instances, :id) "
                                    f"AND attribute_exists({RESTORES})",
                ExpressionAttributeNames={"#i": identifier, "#s": "status"},
                ExpressionAttributeValues={":entry": dyn({"run_id": run_id, "claimed_at": now_iso(),
                                                          "execution_arn": parent}),
                                           ":parent": dyn(parent), ":running": dyn("RUNNING"),
                                           ":id": dyn(identifier)})
            return True
        except ClientError as exc:
            if failed_condition(exc):
                return False
            raise

    def record_reaped(self, comparison_id: str, deleted: list[InstanceOutcome], left: list[InstanceOutcome]) -> None:
        """The reaper's sweep: what it deleted (appended to ``reaped``) and what it left (``reaper_left``)."""
        at = now_iso()
        deleted_items, left_items = ([o.model_dump(mode="json", exclude_unset=True) for o in outcomes]
                                     for outcomes in (deleted, left))
        self._ddb.update_item(
            TableName=self.table, Key=comparison_key(comparison_id),
            UpdateExpression="SET reaped = list_append(if_not_exists(reaped, :empty), :deleted), "
                             "reaper_left = :left, reaped_at = :at, updated_at = :at",
            ExpressionAttributeValues={":empty": dyn([]), ":deleted": dyn(deleted_items), ":left": dyn(left_items),
                                       ":at": dyn(at)})

    # -- a run's item, for the trigger (a run's own restore is the run's, not the trigger's) -----------------
    def run_item(self, run_id: str) -> RunItem | None:
        return self._get(key_of(f"RUN#{run_id}", "RUN"), RunItem)

    # -- cached prices --------------------------------------------------------------------------------------
    def price(self, key: str) -> PriceItem | None:
        return self._get(price_key(key), PriceItem, consistent=False)

    def put_price(self, key: str, *, usd: float, fetched: str, expires_at: int) -> None:
        item = PriceItem.new(usd=usd, fetched=fetched, expires_at=expires_at)
        self._ddb.put_item(TableName=self.table, Item={**price_key(key), **attributes(item.stored())})
