"""Benchmark: Finalize's peak memory (the OS's, ru_maxrss) and findings.json's size against the census's size.

A synthetic run of N objects on the volume: every object a relation fork of 256 KiB on average (8 KiB to
~0.5 MiB), 3 % the run may not read ("no privilege"), 2 % left out by the input ("excluded by input"), the
rest planned (so the plan holds N x 0.95 segments, as PostgreSQL plans every readable fork) in units of
256 MiB (``--planned-pct 1``: 1 % planned, the rest left out by the input, so that the census alone grows); one
unit in 20 FAILED, one in 20 never started; the end census dropped one object in 1,000, created one in 1,000 and
grew one in 500, and the EndCensus step caught up on those. The run is made by
the code under test's own steps, Discover (``steps.discover.discover_and_plan``) and EndCensus
(``warmup.end_census.take_end_census``) on a fake engine, so each version writes its own evidence format;
then ``findings.finalize.finalize`` runs in a fresh interpreter per N, and that interpreter reports its own
peak resident set (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) and its resident set once the imports are
done, before Finalize (the floor every Lambda pays).

No AWS and no moto in the measured interpreter: S3 is a directory (``FileS3``: a put is a file, a multipart
upload writes its parts then joins them, a get streams the file), DynamoDB a JSON file of the items Discover,
EndCensus and the units wrote (``FileDynamo``). The setup interpreter uses moto's DynamoDB, then dumps it.

Run from the worktree root (``--code`` a ``lambdas`` directory per version; the first one is "before"):

    git archive b9e5140 lambdas | tar -x -C /tmp/fmem-base
    /work/main/.venv/bin/python benchmarks/finalize_memory.py --code /tmp/fmem-base/lambdas --code lambdas \\
        --sizes 10000 100000 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MIB = 2**20
BS = 8192
TABLE, BUCKET, RUN_ID = "bench-table", "bench-bucket", "bench-run"
TARGET = {"db_instance_identifier": "db1", "engine": "postgres",
          "secret_arn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:db"}


# ---- fakes of the two AWS clients the store takes (used by both interpreters) ------------------------------

class FileS3:
    """The S3 calls the store makes, on a directory (bodies stream from files, as boto3's do)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.uploads: dict[str, list[Path]] = {}

    def _path(self, key: str) -> Path:
        path = self.root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def put_object(self, *, Bucket: str, Key: str, Body: Any, **_: Any) -> dict[str, Any]:  # noqa: N803
        data = Body if isinstance(Body, bytes) else Body.read() if hasattr(Body, "read") else str(Body).encode()
        self._path(Key).write_bytes(data)
        return {"ETag": '"x"'}

    def get_object(self, *, Bucket: str, Key: str, **_: Any) -> dict[str, Any]:  # noqa: N803
        from botocore.response import StreamingBody

        path = self.root / Key
        if not path.exists():
            raise _missing("NoSuchKey")
        return {"Body": StreamingBody(path.open("rb"), path.stat().st_size), "ContentLength": path.stat().st_size}

    def head_object(self, *, Bucket: str, Key: str, **_: Any) -> dict[str, Any]:  # noqa: N803
        path = self.root / Key
        if not path.exists():
            raise _missing("404")
        return {"ContentLength": path.stat().st_size}

    def create_multipart_upload(self, *, Bucket: str, Key: str, **_: Any) -> dict[str, Any]:  # noqa: N803
        upload = f"u{len(self.uploads)}"
        self.uploads[upload] = []
        return {"UploadId": upload}

    def upload_part(self, *, Bucket: str, Key: str, UploadId: str, PartNumber: int, Body: Any,  # noqa: N803
                    **_: Any) -> dict[str, Any]:
        part = self._path(f".parts/{UploadId}/{PartNumber:05d}")
        part.write_bytes(Body if isinstance(Body, bytes) else Body.read())
        self.uploads[UploadId].append(part)
        return {"ETag": f'"{PartNumber}"'}

    def complete_multipart_upload(self, *, Bucket: str, Key: str, UploadId: str, **_: Any) -> dict[str, Any]:  # noqa: N803
        with self._path(Key).open("wb") as out:
            for part in self.uploads.pop(UploadId):
                with part.open("rb") as f:
                    shutil.copyfileobj(f, out)
                part.unlink()
        return {}

    def abort_multipart_upload(self, *, Bucket: str, Key: str, UploadId: str, **_: Any) -> dict[str, Any]:  # noqa: N803
        for part in self.uploads.pop(UploadId, []):
            part.unlink()
        return {}


def _missing(code: str) -> Exception:
    from botocore.exceptions import ClientError

    return ClientError({"Error": {"Code": code, "Message": "missing"}}, "GetObject")


class FileDynamo:
    """The DynamoDB reads Finalize makes, on the items dumped after the setup (writes are counted, not kept)."""

    def __init__(self, path: Path) -> None:
        self.items = json.loads(path.read_text())
        self.updates = 0

    def get_item(self, *, Key: dict[str, Any], **_: Any) -> dict[str, Any]:  # noqa: N803
        for item in self.items:
            if item["pk"] == Key["pk"] and item["sk"] == Key["sk"]:
                return {"Item": item}
        return {}

    def query(self, *, ExpressionAttributeValues: dict[str, Any], **_: Any) -> dict[str, Any]:  # noqa: N803
        pk, prefix = ExpressionAttributeValues[":pk"]["S"], ExpressionAttributeValues[":prefix"]["S"]
        return {"Items": [i for i in self.items if i["pk"]["S"] == pk and i["sk"]["S"].startswith(prefix)]}

    def update_item(self, **_: Any) -> dict[str, Any]:
        self.updates += 1
        return {}

    put_item = update_item


# ---- the synthetic volume ----------------------------------------------------------------------------------

def _size(i: int) -> int:
    return BS * (1 + (i * 7919) % 63)  # 8 KiB .. 504 KiB, 256 KiB on average


class FakeEngine:
    """Discovery, census and reads of a synthetic volume of ``n`` relation forks; ``end``: the volume after the
    warm-up (one object in 1,000 dropped, one in 1,000 created, one in 500 grown)."""

    read_only_guard = "session"

    def __init__(self, n: int, *, end: bool = False, planned_pct: int = 95) -> None:
        self.n, self.end, self.planned_pct = n, end, planned_pct

    def _objects(self) -> list[tuple[Any, str | None]]:
        from cutover_prep.engines.base import Extent, Segment

        out = []
        ids = list(range(self.n)) + (list(range(self.n, self.n + self.n // 1000)) if self.end else [])
        for i in ids:
            if self.end and i < self.n and i % 1000 == 999:
                continue  # dropped while the run ran
            size = _size(i) * (2 if self.end and i % 500 == 7 else 1)
            kind = ("partition.main", "index.main", "partition.fsm", "partition.vm")[i % 4]
            seg = Segment(schema="part" if i % 2 else "public", name=f"rel{i // 4:07d}", kind=kind, bytes=size,
                          block_size=BS, extents=(Extent(0, 0, size // BS),),
                          locator={"database": f"db{i % 20}", "oid": 16384 + i, "fork": kind.split(".")[1]},
                          database=f"db{i % 20}")
            m = i % 100
            reason = ("no privilege" if m < 3 else "excluded by input" if m < 5 or m >= 5 + self.planned_pct
                      else None)
            out.append((seg, reason))
        return out

    def census(self, options: Any) -> list[Any]:
        from cutover_prep.engines.base import CensusObject

        return [CensusObject(database=s.database, schema=s.schema, name=s.name, kind=s.kind, bytes=s.bytes,
                             key=s.key, readable=reason != "no privilege", reason=reason,
                             file=f"base/{16384 + i}/{s.locator.to_json()['oid']}")
                for i, (s, reason) in enumerate(self._objects())]

    def discover(self, options: Any) -> list[Any]:
        return [s for s, reason in self._objects() if reason is None]

    def read_methods(self) -> dict[str, Any]:
        return {f"db{d}": "pg_prewarm" for d in range(20)}

    def read_range(self, rng: Any) -> Any:
        from cutover_prep.engines.base import ReadResult

        blocks = sum(e.blocks for e in rng.extents)
        return ReadResult(blocks=blocks, bytes=blocks * BS, seconds=0.001, method="pg_prewarm")

    def close(self) -> None:
        pass


def _secret(_arn: str) -> str:
    return '{"username": "u", "password": "p", "dbInstanceIdentifier": "db1"}'


def setup(n: int, root: Path, planned_pct: int = 95) -> dict[str, Any]:
    """Discover, EndCensus and the units' items of a run of ``n`` objects, by the code on ``sys.path``."""
    import boto3
    from moto import mock_aws

    from cutover_prep.dal.store import UNIT_PREFIX, Store, _dyn, evidence_key, run_pk
    from cutover_prep.models.run_input import parse_run_input
    from cutover_prep.models.steps import EndCensusEvent, RunContext, RunState
    from cutover_prep.steps.discover import discover_and_plan
    from cutover_prep.steps.end_census import take_end_census
    from cutover_prep.workflows import table_definition

    for name, value in (("AWS_DEFAULT_REGION", "us-east-1"), ("AWS_ACCESS_KEY_ID", "x"),
                        ("AWS_SECRET_ACCESS_KEY", "x")):
        os.environ[name] = value
    s3 = FileS3(root / "s3")
    with mock_aws():
        ddb = boto3.client("dynamodb", region_name="us-east-1")
        ddb.create_table(**table_definition(TABLE))
        store = Store(dynamodb=ddb, s3=s3, table=TABLE, bucket=BUCKET)
        config = parse_run_input({"target": TARGET, "run_id": RUN_ID, "benchmark": {"enabled": False},
                                  "warmup": {"unit_mb": 256, "max_concurrency": 8}})
        state = {**config, "started_at": "2026-11-27T00:00:00+00:00", "instance": {"address": "db.example.com"}}
        store.start_run(state)
        run = RunState.model_validate(json.loads(json.dumps(state, default=str)))
        out = discover_and_plan(run, store=store, read_secret=_secret,
                                open_engine=lambda spec, w: FakeEngine(n, planned_pct=planned_pct)).to_json()
        context = RunContext.model_validate(out["context"])
        take_end_census(EndCensusEvent(run=context, plan=out["end_census"]), store=store, read_secret=_secret,
                        open_engine=lambda spec, w: FakeEngine(n, end=True, planned_pct=planned_pct)).to_json()
        units = store.get_json(evidence_key(RUN_ID, "units.json"))
        for i, unit in enumerate(units):  # one in 20 failed, one in 20 never started, the rest done
            if i % 20 == 19:
                continue
            done = i % 20 != 13
            item = {"pk": run_pk(RUN_ID), "sk": UNIT_PREFIX + unit["unit_id"], "unit_id": unit["unit_id"],
                    "status": "DONE" if done else "FAILED", "method": "pg_prewarm", "seq": 4,
                    "bytes_read": unit["bytes"] if done else 0, "blocks_read": unit["blocks"] if done else 0,
                    "bytes_planned": unit["bytes"], "seconds": 12.5, "retries": 0,
                    "started_at": f"2026-11-27T00:{i % 60:02d}:00+00:00",
                    "finished_at": f"2026-11-27T01:{i % 60:02d}:00+00:00",
                    "chunks": [[f"2026-11-27T01:{i % 60:02d}:00+00:00", unit["bytes"] // 4, 3.1]] * 4,
                    **({} if done else {"error": "ShortRead", "cause": "synthetic"})}
            ddb.put_item(TableName=TABLE, Item={k: _dyn(v) for k, v in item.items()})
        items = ddb.scan(TableName=TABLE)["Items"]
    (root / "ddb.json").write_text(json.dumps(items))
    return {"units": len(units), "plan_json_bytes": (root / "s3" / evidence_key(RUN_ID, "plan.json")).stat().st_size}


def measure(root: Path) -> dict[str, Any]:
    """Finalize of the run under ``root`` in this interpreter: peak RSS, findings.json's size, seconds."""
    from cutover_prep.dal.store import Store, evidence_key
    from cutover_prep.steps.finalize import finalize

    floor = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tmp_bytes = _watch_tmp()
    store = Store(dynamodb=FileDynamo(root / "ddb.json"), s3=FileS3(root / "s3"), table=TABLE, bucket=BUCKET)
    started, cpu = time.perf_counter(), time.process_time()
    out = finalize(RUN_ID, store=store)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    findings = root / "s3" / evidence_key(RUN_ID, "findings.json")
    evidence = {p.name: p.stat().st_size for p in (root / "s3" / "runs" / RUN_ID).iterdir() if p.is_file()}
    return {"peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "floor_rss_mib": floor / 1024,
            "findings_bytes": findings.stat().st_size, "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
            "verdict": out.verdict, "tmp_mib": round(max(tmp_bytes, default=0) / MIB, 1),
            "evidence": evidence}


def _watch_tmp() -> list[int]:
    """The bytes of the temporary files Finalize's plan pass (``findings.plan_pass``, Lambda's /tmp) holds when it
    ends (its SQLite files; SQLite's own sort files are unlinked as they are made, so not counted); none before it."""
    sizes: list[int] = []
    try:
        from cutover_prep.findings import plan_pass
    except ImportError:
        return sizes
    leave = plan_pass.PlanPass.__exit__

    def measured(self: Any, *exc: Any) -> None:
        sizes.append(sum(p.stat().st_size for p in Path(self._dir.name).iterdir()))
        leave(self, *exc)

    plan_pass.PlanPass.__exit__ = measured
    return sizes


def _child(code: str, what: str, n: int, root: Path, planned_pct: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(code).resolve()), str(Path(__file__).parent)])}
    proc = subprocess.run([sys.executable, __file__, "--child", what, "--n", str(n), "--root", str(root),
                           "--planned-pct", str(planned_pct)],
                          env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        raise SystemExit(f"{what} N={n} with {code} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--code", action="append", help="a lambdas directory; first: before, second: after")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--child", choices=("setup", "measure"))
    parser.add_argument("--n", type=int)
    parser.add_argument("--root", type=Path)
    parser.add_argument("--planned-pct", type=int, default=95,
                        help="objects planned, in %% (95: the whole volume selected; 1: one database of 100 selected, "
                             "the rest excluded by input, the census alone grows)")
    args = parser.parse_args()
    if args.child:
        result = setup(args.n, args.root, args.planned_pct) if args.child == "setup" else measure(args.root)
        print(json.dumps(result))
        return
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for n in args.sizes:
        for code in args.code:
            root = Path(tempfile.mkdtemp(prefix=f"fmem-{n}-"))
            try:
                made = _child(code, "setup", n, root, args.planned_pct)
                got = _child(code, "measure", n, root, args.planned_pct)
            finally:
                shutil.rmtree(root, ignore_errors=True)
            rows[(code, n)] = {**made, **got}
            print(f"N={n:>9,} {code}: peak {got['peak_rss_mib']:.0f} MiB (imports {got['floor_rss_mib']:.0f}), "
                  f"findings.json {got['findings_bytes'] / MIB:.1f} MiB, plan.json {made['plan_json_bytes'] / MIB:.1f}"
                  f" MiB, {made['units']} units, {got['seconds']} s ({got.get('cpu_seconds')} s CPU), {got['verdict']}"
                  f"; /tmp {got.get('tmp_mib', 0)} MiB; evidence "
                  + ", ".join(f"{k} {v / MIB:.1f}" for k, v in sorted(got["evidence"].items()) if v > MIB), flush=True)
    if len(args.code) == 2:
        before, after = args.code
        for n in args.sizes:
            b, a = rows[(before, n)], rows[(after, n)]
            print(f"N={n:>9,}: peak RSS after/before {a['peak_rss_mib'] / b['peak_rss_mib']:.2f} "
                  f"({b['peak_rss_mib']:.0f} -> {a['peak_rss_mib']:.0f} MiB), findings.json after/before "
                  f"{a['findings_bytes'] / b['findings_bytes']:.3f} ({b['findings_bytes'] / MIB:.1f} -> "
                  f"{a['findings_bytes'] / MIB:.1f} MiB)")


if __name__ == "__main__":
    main()
