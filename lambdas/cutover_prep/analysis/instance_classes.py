"""The instance class table of the expected IO limits (pure data; the arithmetic is in ``limits``).

Instance classes
    ``INSTANCE_CLASSES[cls] = (baseline Mbps, maximum Mbps, baseline IOPS, maximum IOPS)``,
    IOPS at 16 KiB I/O. Baseline < maximum marks the "up to" classes (asterisk on both pages):
    they hold the maximum for 30 minutes at least once every 24 hours, then fall back to the
    baseline. ``None`` marks a class that is not EBS-optimized (db.t2, db.m3.large, ...): AWS
    publishes no dedicated EBS bandwidth for it, EBS shares the network link.
    Which classes exist on RDS comes from the RDS page; the numbers come from the EC2 page for
    the underlying instance type, because the RDS page lists only the maximum bandwidth, no
    IOPS, and where the two pages differ (``RDS_PAGE_DIFFERS``) the EC2 page is the one the
    RDS page itself points to for per-type maxima. Classes not listed were not confirmed and
    are left out (db.m7i, db.r7i, the Oracle db.r5*.tpc* classes, db.x2g, db.z1d, ...).
"""

from __future__ import annotations

TABLE_TAKEN = "2026-11-22"
INSTANCE_SOURCES: tuple[dict[str, str], ...] = (
    {"title": 'Amazon RDS User Guide, "Hardware specifications for DB instance classes"',
     "url": "https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/Concepts.DBInstanceClass.Summary.html",
     "version": "page text of 2023-05-30 (awsdocs/amazon-rds-user-guide, doc_source/Concepts.DBInstanceClass.md)",
     "used_for": "which DB instance classes exist, which are EBS-optimized"},
    {"title": 'Amazon EC2 User Guide, "Amazon EBS-optimized instance types"',
     "url": "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ebs-optimized.html",
     "version": "page text of 2023-05-11 (awsdocs/amazon-ec2-user-guide, doc_source/ebs-optimized.md)",
     "used_for": "baseline/maximum bandwidth (Mbps) and IOPS (16 KiB I/O) per instance type"},
)
STORAGE_SOURCES: dict[str, dict[str, str]] = {
    "rds": {"title": 'Amazon RDS User Guide, "Amazon RDS DB instance storage"',
            "url": "https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Storage.html",
            "version": "page text of 2023-06 (awsdocs/amazon-rds-user-guide, doc_source/CHAP_Storage.md)"},
    "gp": {"title": 'Amazon EBS, "General Purpose SSD volumes" (gp2 burst, credits, throughput; gp3)',
           "url": "https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html",
           "version": "page text of 2023-05 (awsdocs/amazon-ec2-user-guide, doc_source/general-purpose.md)"},
    "piops": {"title": 'Amazon EBS, "Provisioned IOPS SSD volumes" (io1 throughput, io2 Block Express)',
              "url": "https://docs.aws.amazon.com/ebs/latest/userguide/provisioned-iops.html",
              "version": "page text of 2023-05 (awsdocs/amazon-ec2-user-guide, doc_source/provisioned-iops.md)"},
    "magnetic": {"title": 'Amazon EBS, "Amazon EBS volume types" (magnetic, previous generation)',
                 "url": "https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html",
                 "version": "page text of 2023-05 (awsdocs/amazon-ec2-user-guide, doc_source/ebs-volume-types.md)"},
}


# class: (baseline Mbps, maximum Mbps, baseline IOPS, maximum IOPS); None = not EBS-optimized.
INSTANCE_CLASSES: dict[str, tuple[int, int, int, int] | None] = {
    # db.t2
    "db.t2.2xlarge": None,
    "db.t2.xlarge": None,
    "db.t2.large": None,
    "db.t2.medium": None,
    "db.t2.small": None,
    "db.t2.micro": None,
    # db.t3
    "db.t3.2xlarge": (695, 2780, 4000, 15700),
    "db.t3.xlarge": (695, 2780, 4000, 15700),
    "db.t3.large": (695, 2780, 4000, 15700),
    "db.t3.medium": (347, 2085, 2000, 11800),
    "db.t3.small": (174, 2085, 1000, 11800),
    "db.t3.micro": (87, 2085, 500, 11800),
    # db.t4g
    "db.t4g.2xlarge": (695, 2780, 4000, 15700),
    "db.t4g.xlarge": (695, 2780, 4000, 15700),
    "db.t4g.large": (695, 2780, 4000, 15700),
    "db.t4g.medium": (347, 2085, 2000, 11800),
    "db.t4g.small": (174, 2085, 1000, 11800),
    "db.t4g.micro": (87, 2085, 500, 11800),
    # db.m3
    "db.m3.2xlarge": (1000, 1000, 8000, 8000),
    "db.m3.xlarge": (500, 500, 4000, 4000),
    "db.m3.large": None,
    "db.m3.medium": None,
    # db.m4
    "db.m4.16xlarge": (10000, 10000, 65000, 65000),
    "db.m4.10xlarge": (4000, 4000, 32000, 32000),
    "db.m4.4xlarge": (2000, 2000, 16000, 16000),
    "db.m4.2xlarge": (1000, 1000, 8000, 8000),
    "db.m4.xlarge": (750, 750, 6000, 6000),
    "db.m4.large": (450, 450, 3600, 3600),
    # db.m5
    "db.m5.24xlarge": (19000, 19000, 80000, 80000),
    "db.m5.16xlarge": (13600, 13600, 60000, 60000),
    "db.m5.12xlarge": (9500, 9500, 40000, 40000),
    "db.m5.8xlarge": (6800, 6800, 30000, 30000),
    "db.m5.4xlarge": (4750, 4750, 18750, 18750),
    "db.m5.2xlarge": (2300, 4750, 12000, 18750),
    "db.m5.xlarge": (1150, 4750, 6000, 18750),
    "db.m5.large": (650, 4750, 3600, 18750),
    # db.m5d
    "db.m5d.24xlarge": (19000, 19000, 80000, 80000),
    "db.m5d.16xlarge": (13600, 13600, 60000, 60000),
    "db.m5d.12xlarge": (9500, 9500, 40000, 40000),
    "db.m5d.8xlarge": (6800, 6800, 30000, 30000),
    "db.m5d.4xlarge": (4750, 4750, 18750, 18750),
    "db.m5d.2xlarge": (2300, 4750, 12000, 18750),
    "db.m5d.xlarge": (1150, 4750, 6000, 18750),
    "db.m5d.large": (650, 4750, 3600, 18750),
    # db.m6g
    "db.m6g.16xlarge": (19000, 19000, 80000, 80000),
    "db.m6g.12xlarge": (14250, 14250, 50000, 50000),
    "db.m6g.8xlarge": (9500, 9500, 40000, 40000),
    "db.m6g.4xlarge": (4750, 4750, 20000, 20000),
    "db.m6g.2xlarge": (2375, 4750, 12000, 20000),
    "db.m6g.xlarge": (1188, 4750, 6000, 20000),
    "db.m6g.large": (630, 4750, 3600, 20000),
    # db.m6gd
    "db.m6gd.16xlarge": (19000, 19000, 80000, 80000),
    "db.m6gd.12xlarge": (14250, 14250, 50000, 50000),
    "db.m6gd.8xlarge": (9500, 9500, 40000, 40000),
    "db.m6gd.4xlarge": (4750, 4750, 20000, 20000),
    "db.m6gd.2xlarge": (2375, 4750, 12000, 20000),
    "db.m6gd.xlarge": (1188, 4750, 6000, 20000),
    "db.m6gd.large": (630, 4750, 3600, 20000),
    # db.m6i
    "db.m6i.32xlarge": (40000, 40000, 160000, 160000),
    "db.m6i.24xlarge": (30000, 30000, 120000, 120000),
    "db.m6i.16xlarge": (20000, 20000, 80000, 80000),
    "db.m6i.12xlarge": (15000, 15000, 60000, 60000),
    "db.m6i.8xlarge": (10000, 10000, 40000, 40000),
    "db.m6i.4xlarge": (5000, 10000, 20000, 40000),
    "db.m6i.2xlarge": (2500, 10000, 12000, 40000),
    "db.m6i.xlarge": (1250, 10000, 6000, 40000),
    "db.m6i.large": (650, 10000, 3600, 40000),
    # db.m7g
    "db.m7g.16xlarge": (20000, 20000, 80000, 80000),
    "db.m7g.12xlarge": (15000, 15000, 60000, 60000),
    "db.m7g.8xlarge": (10000, 10000, 40000, 40000),
    "db.m7g.4xlarge": (5000, 10000, 20000, 40000),
    "db.m7g.2xlarge": (2500, 10000, 12000, 40000),
    "db.m7g.xlarge": (1250, 10000, 6000, 40000),
    "db.m7g.large": (630, 10000, 3600, 40000),
    # db.r3
    "db.r3.8xlarge": None,
    "db.r3.4xlarge": (2000, 2000, 16000, 16000),
    "db.r3.2xlarge": (1000, 1000, 8000, 8000),
    "db.r3.xlarge": (500, 500, 4000, 4000),
    "db.r3.large": None,
    # db.r4
    "db.r4.16xlarge": (14000, 14000, 75000, 75000),
    "db.r4.8xlarge": (7000, 7000, 37500, 37500),
    "db.r4.4xlarge": (3500, 3500, 18750, 18750),
    "db.r4.2xlarge": (1700, 1700, 12000, 12000),
    "db.r4.xlarge": (850, 850, 6000, 6000),
    "db.r4.large": (425, 425, 3000, 3000),
    # db.r5
    "db.r5.24xlarge": (19000, 19000, 80000, 80000),
    "db.r5.16xlarge": (13600, 13600, 60000, 60000),
    "db.r5.12xlarge": (9500, 9500, 40000, 40000),
    "db.r5.8xlarge": (6800, 6800, 30000, 30000),
    "db.r5.4xlarge": (4750, 4750, 18750, 18750),
    "db.r5.2xlarge": (2300, 4750, 12000, 18750),
    "db.r5.xlarge": (1150, 4750, 6000, 18750),
    "db.r5.large": (650, 4750, 3600, 18750),
    # db.r5b
    "db.r5b.24xlarge": (60000, 60000, 260000, 260000),
    "db.r5b.16xlarge": (40000, 40000, 173333, 173333),
    "db.r5b.12xlarge": (30000, 30000, 130000, 130000),
    "db.r5b.8xlarge": (20000, 20000, 86667, 86667),
    "db.r5b.4xlarge": (10000, 10000, 43333, 43333),
    "db.r5b.2xlarge": (5000, 10000, 21667, 43333),
    "db.r5b.xlarge": (2500, 10000, 10833, 43333),
    "db.r5b.large": (1250, 10000, 5417, 43333),
    # db.r5d
    "db.r5d.24xlarge": (19000, 19000, 80000, 80000),
    "db.r5d.16xlarge": (13600, 13600, 60000, 60000),
    "db.r5d.12xlarge": (9500, 9500, 40000, 40000),
    "db.r5d.8xlarge": (6800, 6800, 30000, 30000),
    "db.r5d.4xlarge": (4750, 4750, 18750, 18750),
    "db.r5d.2xlarge": (2300, 4750, 12000, 18750),
    "db.r5d.xlarge": (1150, 4750, 6000, 18750),
    "db.r5d.large": (650, 4750, 3600, 18750),
    # db.r6g
    "db.r6g.16xlarge": (19000, 19000, 80000, 80000),
    "db.r6g.12xlarge": (14250, 14250, 50000, 50000),
    "db.r6g.8xlarge": (9500, 9500, 40000, 40000),
    "db.r6g.4xlarge": (4750, 4750, 20000, 20000),
    "db.r6g.2xlarge": (2375, 4750, 12000, 20000),
    "db.r6g.xlarge": (1188, 4750, 6000, 20000),
    "db.r6g.large": (630, 4750, 3600, 20000),
    # db.r6gd
    "db.r6gd.16xlarge": (19000, 19000, 80000, 80000),
    "db.r6gd.12xlarge": (14250, 14250, 50000, 50000),
    "db.r6gd.8xlarge": (9500, 9500, 40000, 40000),
    "db.r6gd.4xlarge": (4750, 4750, 20000, 20000),
    "db.r6gd.2xlarge": (2375, 4750, 12000, 20000),
    "db.r6gd.xlarge": (1188, 4750, 6000, 20000),
    "db.r6gd.large": (630, 4750, 3600, 20000),
    # db.r6i
    "db.r6i.32xlarge": (40000, 40000, 160000, 160000),
    "db.r6i.24xlarge": (30000, 30000, 120000, 120000),
    "db.r6i.16xlarge": (20000, 20000, 80000, 80000),
    "db.r6i.12xlarge": (15000, 15000, 60000, 60000),
    "db.r6i.8xlarge": (10000, 10000, 40000, 40000),
    "db.r6i.4xlarge": (5000, 10000, 20000, 40000),
    "db.r6i.2xlarge": (2500, 10000, 12000, 40000),
    "db.r6i.xlarge": (1250, 10000, 6000, 40000),
    "db.r6i.large": (650, 10000, 3600, 40000),
    # db.r7g
    "db.r7g.16xlarge": (20000, 20000, 80000, 80000),
    "db.r7g.12xlarge": (15000, 15000, 60000, 60000),
    "db.r7g.8xlarge": (10000, 10000, 40000, 40000),
    "db.r7g.4xlarge": (5000, 10000, 20000, 40000),
    "db.r7g.2xlarge": (2500, 10000, 12000, 40000),
    "db.r7g.xlarge": (1250, 10000, 6000, 40000),
    "db.r7g.large": (630, 10000, 3600, 40000),
    # db.x2iedn
    "db.x2iedn.32xlarge": (80000, 80000, 260000, 260000),
    "db.x2iedn.24xlarge": (60000, 60000, 195000, 195000),
    "db.x2iedn.16xlarge": (40000, 40000, 130000, 130000),
    "db.x2iedn.8xlarge": (20000, 20000, 65000, 65000),
    "db.x2iedn.4xlarge": (10000, 20000, 32500, 65000),
    "db.x2iedn.2xlarge": (5000, 20000, 16250, 65000),
    "db.x2iedn.xlarge": (2500, 20000, 8125, 65000),
}

# Where the RDS page's "Max. EBS bandwidth (Mbps)" differs from the EC2 page used above.
RDS_PAGE_DIFFERS: dict[str, str] = {
    "db.m6g.4xlarge": "6,800", "db.m6g.12xlarge": "13,500", "db.m6gd.8xlarge": "9,000",
    "db.m6gd.12xlarge": "13,500", "db.r6g.8xlarge": "9,000", "db.r6g.12xlarge": "13,500",
    "db.r6gd.8xlarge": "9,000", "db.r6gd.12xlarge": "13,500",
    "db.m6i.large": "Up to 12,500", "db.m6i.xlarge": "Up to 12,500", "db.m6i.2xlarge": "Up to 12,500",
    "db.m6i.4xlarge": "Up to 12,500", "db.m6i.8xlarge": "12,500", "db.m6i.12xlarge": "18,750",
    "db.m6i.16xlarge": "25,000", "db.m6i.24xlarge": "37,500", "db.m6i.32xlarge": "50,000",
    "db.t3.micro": "Up to 1,536", "db.t3.small": "Up to 1,536", "db.t3.medium": "Up to 1,536",
    "db.t3.large": "Up to 2,048", "db.t3.xlarge": "Up to 2,048", "db.t3.2xlarge": "Up to 2,048",
}
