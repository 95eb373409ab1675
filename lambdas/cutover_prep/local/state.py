"""A local run's AWS state, kept in its evidence folder, so that its run id can resume (issue 32, finding 7).

moto plays DynamoDB and S3 in the local run's own process: what the workflow recorded (the run item, each unit's
cursor and status, the plan) is gone when the process ends. A deployed run id resumes because DynamoDB and S3
keep them (``steps/validate_input.py``: ValidateInput binds the id to its first target and options; Discover
keeps the plan;
WarmUnit skips a DONE unit and resumes one in progress from its cursor). So the local run saves the table's items
and the bucket's objects under ``<out>/.local-state/`` whenever it ends (done, failed or stopped by Ctrl-C), and
the next ``local`` of the same run id into the same folder loads them into its moto before the workflow starts:
the workflow then restarts the run exactly as a deployed restart does, under the same rules.

One folder is one run at a time: ``exclusive`` holds an ``fcntl.flock`` on ``<out>/.local-run.lock`` for the whole
run; the kernel releases it when the process ends, however it ends, so a crash leaves no stale lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from cutover_prep.dal.records.run import RunItem
from cutover_prep.dal.store import RUN_SK, run_pk
from cutover_prep.dal.store import _item as plain_item

STATE_DIR = ".local-state"  # under --out: the saved table and bucket
LOCK_FILE = ".local-run.lock"
TABLE_FILE = "dynamodb.json"
BUCKET_DIR = "s3"


class RunIdInUse(Exception):
    """Another ``cutover-prep local`` is running on this evidence folder (and so on this run id)."""


@contextlib.contextmanager
def exclusive(out: Path, run_id: str) -> Iterator[None]:
    """Hold ``out`` for this run: a second local run on it is refused at once (``RunIdInUse``), never queued.

    A folder this made and the run left empty (refused, or the target unreachable) is removed again with its lock
    file; so a lock is taken only on the file its path names now (a run that opened the file just before it was
    removed takes the lock anew on the new one)."""
    made = [p for p in (out, *out.parents) if not p.exists()]  # what mkdir makes, deepest first
    out.mkdir(parents=True, exist_ok=True)
    lock = out / LOCK_FILE
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunIdInUse(f"RunIdInUse: run {run_id} is running now in another cutover-prep local on {out}; let "
                             "it end (or Ctrl-C it) and run again to resume it, or use a new --run-id and --out"
                             ) from None
        try:
            if os.fstat(fd).st_ino == os.stat(lock).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # removed by the run that made the folder, as it ended: lock the file there now
        out.mkdir(parents=True, exist_ok=True)
    try:
        yield
    finally:
        try:
            if made and [p.name for p in out.iterdir()] == [LOCK_FILE]:
                lock.unlink()
                for path in made:
                    path.rmdir()
        except OSError:  # another run wrote there meanwhile: the folder stays
            pass
        os.close(fd)  # closing the descriptor releases the lock


def saved(out: Path) -> bool:
    return (out / STATE_DIR / TABLE_FILE).is_file()


def saved_run(out: Path) -> tuple[str | None, RunItem | None]:
    """(the run id the saved state is of, its run item as the Store reads it; None when ValidateInput had not
    recorded it yet)."""
    doc = json.loads((out / STATE_DIR / TABLE_FILE).read_text())  # as ``save`` writes it: both keys
    run_id = doc["run_id"]
    key = {"pk": {"S": run_pk(str(run_id))}, "sk": {"S": RUN_SK}}
    for raw in doc["items"]:
        if {"pk": raw["pk"], "sk": raw["sk"]} == key:
            return run_id, RunItem.read(plain_item(raw))
    return run_id, None


class ListedObject(BaseModel):
    """An object of S3's ListObjectsV2 answer: its key."""

    key: str = Field(alias="Key")


class ObjectListing(BaseModel):
    """A page of S3's ListObjectsV2 answer: the objects it lists (an empty page has no ``Contents``)."""

    contents: list[ListedObject] = Field(default=[], alias="Contents")


def object_keys(s3: Any, bucket: str, prefix: str = "") -> Iterator[str]:
    """Every key of ``bucket`` under ``prefix``, page by page."""
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        yield from (obj.key for obj in ObjectListing.model_validate(page).contents)


def save(aws: Any, out: Path, run_id: str) -> None:
    """Every item of the run's table and every object of its bucket, to ``<out>/.local-state/`` (replaced whole:
    written beside it, then renamed over it)."""
    ddb, s3 = aws.client("dynamodb"), aws.client("s3")
    pages = ddb.get_paginator("scan").paginate(TableName=aws.table, ConsistentRead=True)
    items = [item for page in pages for item in page["Items"]]  # a scan's every page has Items
    final, staging = out / STATE_DIR, out / f"{STATE_DIR}.new"
    shutil.rmtree(staging, ignore_errors=True)
    (staging / BUCKET_DIR).mkdir(parents=True)
    for key in object_keys(s3, aws.bucket):
        path = _object_path(staging / BUCKET_DIR, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(s3.get_object(Bucket=aws.bucket, Key=key)["Body"].read())
    (staging / TABLE_FILE).write_text(json.dumps({"run_id": run_id, "items": items}))
    shutil.rmtree(final, ignore_errors=True)
    staging.rename(final)


def load(aws: Any, out: Path) -> int:
    """Put the saved items and objects into this process's moto (before the workflow starts); how many items."""
    ddb, s3 = aws.client("dynamodb"), aws.client("s3")
    items = json.loads((out / STATE_DIR / TABLE_FILE).read_text())["items"]
    for item in items:
        ddb.put_item(TableName=aws.table, Item=item)
    bucket = (out / STATE_DIR / BUCKET_DIR).resolve()
    for path in sorted(p for p in bucket.rglob("*") if p.is_file()):
        s3.put_object(Bucket=aws.bucket, Key=path.relative_to(bucket).as_posix(), Body=path.read_bytes())
    return len(items)


def _object_path(root: Path, key: str) -> Path:
    path = (root / key).resolve()
    if not path.is_relative_to(root.resolve()) or path == root.resolve():
        raise ValueError(f"object key {key[:100]!r} would be saved outside {root}")
    return path
