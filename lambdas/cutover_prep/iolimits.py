"""Expected IO limits of an RDS instance: its class's EBS bandwidth and IOPS, and its storage.

Pure data and arithmetic, no AWS calls. The instance table holds the published EBS
limits of the EC2 type under each DB instance class: maximum (burst, "up to") bandwidth
in Mbps and IOPS, and the baseline where AWS lists one (Nitro classes of xlarge and
smaller burst for 30 minutes a day, then fall to the baseline).

Sources (as published, read 2026-11):
- INSTANCE_SOURCE: Amazon EC2 User Guide, "Amazon EBS-optimized instance types"
  (https://docs.aws.amazon.com/ec2/latest/instancetypes/ec2-nitro-instances.html and
  .../ebs-optimized.html, previous generation: .../instance-types/previous-generation);
  RDS, "Hardware specifications for DB instance classes". The seeds agree: db.m4.large
  450 Mbps = 57,600 KB/s, db.m4.4xlarge 2,000 Mbps = 256,000 KB/s (seed 000).
- STORAGE_SOURCE: Amazon RDS User Guide, "Amazon RDS DB instance storage" (gp2: 3 IOPS
  per GiB, 100 minimum, 16,000 maximum, burst to 3,000 IOPS below 1,000 GiB from a
  5.4 million credit bucket; gp3: 3,000 IOPS / 125 MiB/s baseline, striped across
  volumes at 400 GiB (200 GiB for Oracle) for 12,000 IOPS / 500 MiB/s; io1/io2:
  provisioned IOPS, throughput up to 256 KiB per IO).
db.t2 classes are not EBS-optimized: their storage traffic shares the network link and
AWS publishes no dedicated EBS figure, so no limit is assumed for them.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

INSTANCE_SOURCE = ("Amazon EC2 User Guide, 'Amazon EBS-optimized instance types' (EBS bandwidth Mbps, IOPS; "
                   "https://docs.aws.amazon.com/ec2/latest/instancetypes/ec2-nitro-instances.html), via RDS "
                   "'Hardware specifications for DB instance classes'; read 2026-11")
STORAGE_SOURCE = ("Amazon RDS User Guide, 'Amazon RDS DB instance storage' "
                  "(https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Storage.html); read 2026-11")

# size -> (max Mbps, max IOPS, baseline Mbps, baseline IOPS); baseline None = sustained at max
_M5 = {"large": (4750, 18750, 650, 3600), "xlarge": (4750, 18750, 1150, 6000), "2xlarge": (4750, 18750, 2300, 12000),
       "4xlarge": (4750, 18750, None, None), "8xlarge": (6800, 30000, None, None),
       "12xlarge": (9500, 40000, None, None), "16xlarge": (13600, 60000, None, None),
       "24xlarge": (19000, 80000, None, None)}
_M6I = {"large": (10000, 40000, 650, 3600), "xlarge": (10000, 40000, 1250, 6000),
        "2xlarge": (10000, 40000, 2500, 12000), "4xlarge": (10000, 40000, 5000, 20000),
        "8xlarge": (10000, 40000, None, None), "12xlarge": (15000, 60000, None, None),
        "16xlarge": (20000, 80000, None, None), "24xlarge": (30000, 120000, None, None),
        "32xlarge": (40000, 160000, None, None)}
_M6G = {"large": (4750, 20000, 630, 3600), "xlarge": (4750, 20000, 1188, 6000), "2xlarge": (4750, 20000, 2375, 12000),
        "4xlarge": (4750, 20000, None, None), "8xlarge": (9500, 40000, None, None),
        "12xlarge": (14250, 50000, None, None), "16xlarge": (19000, 80000, None, None)}
_M4 = {"large": (450, 3600, None, None), "xlarge": (750, 6000, None, None), "2xlarge": (1000, 8000, None, None),
       "4xlarge": (2000, 16000, None, None), "10xlarge": (4000, 32000, None, None),
       "16xlarge": (10000, 65000, None, None)}
_M3 = {"xlarge": (500, 4000, None, None), "2xlarge": (1000, 8000, None, None)}
_R4 = {"large": (425, 3000, None, None), "xlarge": (850, 6000, None, None), "2xlarge": (1700, 12000, None, None),
       "4xlarge": (3500, 18750, None, None), "8xlarge": (7000, 37500, None, None),
       "16xlarge": (14000, 75000, None, None)}
_R3 = {"xlarge": (500, 4000, None, None), "2xlarge": (1000, 8000, None, None), "4xlarge": (2000, 16000, None, None)}
_T3 = {"micro": (2085, 11800, 87, 500), "small": (2085, 11800, 174, 1000), "medium": (2085, 11800, 347, 2000),
       "large": (2780, 15700, 695, 4000), "xlarge": (2780, 15700, 695, 4000), "2xlarge": (2780, 15700, 695, 4000)}
_T4G = {"micro": (2085, 11800, 87, 500), "small": (2085, 11800, 174, 1000), "medium": (2085, 11800, 347, 2000),
        "large": (2780, 15700, 695, 4000), "xlarge": (2780, 15700, 695, 4000), "2xlarge": (2780, 15700, 695, 4000)}
_FAMILIES: dict[str, dict[str, tuple[int, int, int | None, int | None]]] = {
    "m5": _M5, "r5": _M5, "m6i": _M6I, "r6i": _M6I, "m6g": _M6G, "r6g": _M6G, "m7g": _M6G | {
        "large": (10000, 40000, 630, 3600), "xlarge": (10000, 40000, 1250, 6000),
        "2xlarge": (10000, 40000, 2500, 12000), "4xlarge": (10000, 40000, 5000, 20000),
        "8xlarge": (10000, 40000, None, None), "12xlarge": (15000, 60000, None, None),
        "16xlarge": (20000, 80000, None, None)},
    "m4": _M4, "m3": _M3, "r4": _R4, "r3": _R3, "t3": _T3, "t4g": _T4G,
}
_FAMILIES["r7g"] = _FAMILIES["m7g"]
NOT_EBS_OPTIMIZED = {"t2": ("micro", "small", "medium", "large", "xlarge", "2xlarge"), "m3": ("medium", "large")}

INSTANCE_CLASSES: dict[str, dict[str, Any]] = {}
for _family, _sizes in _FAMILIES.items():
    for _size, (_mbps, _iops, _bmbps, _biops) in _sizes.items():
        INSTANCE_CLASSES[f"db.{_family}.{_size}"] = {"max_mbps": _mbps, "max_iops": _iops,
                                                     "baseline_mbps": _bmbps, "baseline_iops": _biops}
for _family, _sizes in NOT_EBS_OPTIMIZED.items():
    for _size in _sizes:
        INSTANCE_CLASSES[f"db.{_family}.{_size}"] = {"max_mbps": None, "max_iops": None, "baseline_mbps": None,
                                                     "baseline_iops": None}

STORAGE_TYPES = ("gp2", "gp3", "io1", "io2", "standard")
GP3_STRIPE_GB = {"oracle": 200, "postgres": 400, "mysql": 400, "mariadb": 400}


class UnknownInstanceClass(ValueError):
    pass


class InvalidStorage(ValueError):
    pass


def kib_per_s(mbps: float) -> float:
    """EBS bandwidth in Mbps (10^6 bit/s) as KiB/s."""
    return mbps * 1_000_000 / 8 / 1024


def instance_limits(instance_class: str) -> dict[str, Any]:
    name = instance_class.strip().lower()
    if not re.match(r"^db\.[a-z0-9-]+\.[a-z0-9]+$", name):
        raise UnknownInstanceClass(f"instance class {instance_class!r} is not a DB instance class (e.g. db.m5.large)")
    if name not in INSTANCE_CLASSES:
        close = difflib.get_close_matches(name, INSTANCE_CLASSES, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UnknownInstanceClass(f"instance class {instance_class} is not in the limits table{hint} "
                                   "(analyze without --instance-class to judge from the measurements alone)")
    row = INSTANCE_CLASSES[name]
    out: dict[str, Any] = {"class": name, **row, "source": INSTANCE_SOURCE}
    if row["max_mbps"] is None:
        out["note"] = f"{name} is not EBS-optimized: storage shares the network link, AWS publishes no EBS limit"
        return out
    out["max_kib_s"] = round(kib_per_s(row["max_mbps"]))
    out["baseline_kib_s"] = round(kib_per_s(row["baseline_mbps"])) if row["baseline_mbps"] else None
    return out


def storage_limits(storage_type: str, allocated_gb: int, *, iops: int | None = None,
                   throughput_mbps: float | None = None, engine: str = "postgres") -> dict[str, Any]:
    st = storage_type.strip().lower()
    if st not in STORAGE_TYPES:
        raise InvalidStorage(f"storage type {storage_type!r} is not one of {', '.join(STORAGE_TYPES)}")
    if allocated_gb <= 0:
        raise InvalidStorage(f"allocated storage {allocated_gb} GiB must be positive")
    out: dict[str, Any] = {"type": st, "allocated_gb": allocated_gb, "source": STORAGE_SOURCE, "notes": []}
    if st == "gp2":
        base = min(max(3 * allocated_gb, 100), 16000)
        out.update(iops=base, burst_iops=3000 if base < 3000 else None,
                   throughput_mib_s=128 if allocated_gb <= 170 else 250)
        if base < 3000:
            out["notes"].append(f"gp2 {allocated_gb} GiB: baseline {base} IOPS, bursts to 3,000 IOPS while its "
                                "credit balance (BurstBalance) lasts")
    elif st == "gp3":
        threshold = GP3_STRIPE_GB.get(engine, 400)
        striped = allocated_gb >= threshold
        out.update(iops=iops or (12000 if striped else 3000),
                   throughput_mib_s=throughput_mbps or (500 if striped else 125), striped=striped)
        out["notes"].append(f"gp3 on {engine}: {'striped' if striped else 'not striped'} "
                            f"(threshold {threshold} GiB)")
    elif st in ("io1", "io2"):
        if not iops:
            raise InvalidStorage(f"{st} storage needs its provisioned IOPS (--iops)")
        out.update(iops=iops, throughput_mib_s=min(iops * 256 / 1024, 4000 if st == "io2" else 1000))
        out["notes"].append(f"{st}: {iops:,} provisioned IOPS; IOs up to 256 KiB count as one")
    else:
        out.update(iops=None, throughput_mib_s=None)
        out["notes"].append("magnetic storage: no published limits (roughly 100 IOPS average)")
    out["throughput_kib_s"] = out["throughput_mib_s"] * 1024 if out["throughput_mib_s"] else None
    return out


def expected_limits(instance_class: str | None, storage_type: str | None, allocated_gb: int | None, *,
                    iops: int | None = None, throughput_mbps: float | None = None,
                    engine: str = "postgres") -> dict[str, Any]:
    """Instance caps, storage caps, and the effective (lower) ones with which side binds."""
    inst = instance_limits(instance_class) if instance_class else None
    stor = storage_limits(storage_type, int(allocated_gb or 0), iops=iops, throughput_mbps=throughput_mbps,
                          engine=engine) if storage_type else None
    candidates_iops = [(v, who) for v, who in (((inst or {}).get("max_iops"), "instance"),
                                               ((stor or {}).get("burst_iops") or (stor or {}).get("iops"), "storage"))
                       if v]
    candidates_tput = [(v, who) for v, who in (((inst or {}).get("max_kib_s"), "instance"),
                                               ((stor or {}).get("throughput_kib_s"), "storage")) if v]
    effective: dict[str, Any] = {}
    if candidates_iops:
        effective["iops"], effective["iops_bound_by"] = min(candidates_iops)
    if candidates_tput:
        effective["throughput_kib_s"], effective["throughput_bound_by"] = min(candidates_tput)
    if effective.get("iops") and effective.get("throughput_kib_s"):
        effective["crossover_kb"] = round(effective["throughput_kib_s"] / effective["iops"], 1)
    return {"instance": inst, "storage": stor, "effective": effective, "engine": engine}
