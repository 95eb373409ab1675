"""The project's GitHub Actions workflow (issue 35 §6), checked offline: it cannot run here.

- Valid against the GitHub workflow schema that check-jsonschema vendors (SchemaStore's
  ``github-workflow.json``: ``--builtin-schema vendor.github-workflows``, check-jsonschema's documentation,
  https://check-jsonschema.readthedocs.io/en/stable/usage.html#builtin-schema); a broken workflow fails it.
- It runs what the issue asks: the Oracle live test and the preflight against a ``gvenzl/oracle-free`` service
  container, and the whole suite against PostgreSQL and MariaDB service containers, each service waited for by
  its health check (GitHub Docs, "About service containers": ``options`` passes ``docker create`` flags)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def check(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, timeout=120, check=False)


def test_every_workflow_is_valid_against_the_vendored_github_workflow_schema() -> None:
    assert WORKFLOWS, "no workflow in .github/workflows"
    for path in WORKFLOWS:
        done = check(path)
        assert done.returncode == 0, f"{path.name}: {done.stdout}{done.stderr}"


def test_the_schema_check_fails_a_broken_workflow(tmp_path: Path) -> None:
    """A job without ``runs-on`` and a step that is a string: what the check exists to catch."""
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  x:\n    steps:\n      - just a string\n")
    done = check(broken)
    assert done.returncode != 0 and "runs-on" in done.stdout + done.stderr


def jobs() -> dict:
    (workflow,) = [yaml.safe_load(p.read_text()) for p in WORKFLOWS if p.name == "databases.yml"]
    return workflow["jobs"]


def test_the_oracle_job_runs_the_live_test_and_the_preflight_against_oracle_free() -> None:
    job = jobs()["oracle"]
    service = job["services"]["oracle"]
    assert service["image"].startswith("gvenzl/oracle-free:") and "1521:1521" in service["ports"]
    assert "--health-cmd" in service["options"]  # the job starts once the database is open
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert "tests/integration/test_oracle_live.py" in runs and "cutover-prep preflight" in runs
    assert job["env"]["ORACLE_DSN"].endswith("@localhost:1521/FREEPDB1")  # the live test's skip condition is met


def test_the_suite_job_runs_everything_on_postgresql_and_mariadb() -> None:
    job = jobs()["suite"]
    images = {name: s["image"].split(":")[0] for name, s in job["services"].items()}
    assert images == {"postgres": "postgres", "mariadb": "mariadb"}
    assert all("--health-cmd" in s["options"] for s in job["services"].values())
    assert any("make test" in step.get("run", "") for step in job["steps"])
    assert job["env"]["CUTOVER_PREP_TEST_PG"].startswith("host=127.0.0.1 port=5432")  # tests/conftest.py reads these
    assert job["env"]["CUTOVER_PREP_TEST_MYSQL"] == "127.0.0.1:3306"
