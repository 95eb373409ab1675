"""findings.storage_emulation and the local run's instance facts (pure)."""

from cutover_prep.findings.emulation import instance_facts, storage_emulation

MOTO_INSTANCE = {"engine": "postgres", "engine_family": "postgres", "engine_version": "16.2", "db_name": "demo",
                 "db_instance_class": "db.m5.large", "storage_type": "gp3", "allocated_storage_gb": 100}


def test_an_aws_run_has_no_emulation_section_and_keeps_rds_facts():
    assert storage_emulation(None, 50.0) is None
    assert instance_facts(MOTO_INSTANCE, None) == MOTO_INSTANCE


def test_emulated_run_sets_the_warmup_rate_against_the_ceiling_and_labels_the_instance():
    section = storage_emulation({"emulated": True, "ceiling_mib_per_s": 40.0, "hydrated_pct": 100.0}, 34.0)
    assert section["warmup_mib_per_s"] == 34.0
    assert section["warmup_to_ceiling"] == 0.85
    facts = instance_facts(MOTO_INSTANCE, section)
    assert facts["emulated"] is True and facts["db_instance_class"] == "db.m5.large"


def test_without_emulation_moto_s_invented_class_and_storage_are_left_out():
    section = storage_emulation({"emulated": False, "reason": "--dsn: elsewhere"}, 34.0)
    assert "warmup_to_ceiling" not in section
    facts = instance_facts(MOTO_INSTANCE, section)
    assert "db_instance_class" not in facts and "storage_type" not in facts
    assert facts["engine_version"] == "16.2"
    assert "--dsn: elsewhere" in facts["stand_in"]


def test_the_report_says_what_the_storage_was_in_every_rendering():
    from cutover_prep.report import render_report, summary_markdown
    from cutover_prep.report.terminal import terminal_lines
    from cutover_prep.report.view import storage_emulation_line

    emulated = {"storage_emulation": {"emulated": True, "ceiling_mib_per_s": 15.625, "hydrated_pct": 100.0,
                                      "first_touch_ms": 39.9, "warmup_mib_per_s": 15.606, "warmup_to_ceiling": 0.999,
                                      "profile": {"storage_type": "gp3", "allocated_gb": 100, "time_scale": 8,
                                                  "instance_class": "db.t3.medium"}},
                "instance": instance_facts(MOTO_INSTANCE, {"emulated": True})}
    line = storage_emulation_line(emulated)
    assert "gp3 100 GiB on db.t3.medium" in line and "1.00× the 15.6 MiB/s ceiling" in line
    assert any(line in text for text in terminal_lines(emulated))
    assert line in summary_markdown(emulated, findings_uri="s3://b/f", report_uri="s3://b/r")
    page = render_report(emulated)
    assert 'id="storage-emulation"' in page and "instance class (emulated)" in page
    plain = {"storage_emulation": {"emulated": False, "reason": "--dsn: elsewhere"},
             "instance": instance_facts(MOTO_INSTANCE, {"emulated": False, "reason": "--dsn: elsewhere"})}
    assert storage_emulation_line(plain) == "no emulated restored volume: --dsn: elsewhere"
    assert "db.m5.large" not in render_report(plain)
    assert storage_emulation_line({}) is None  # a run in AWS
