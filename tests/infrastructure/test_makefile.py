"""The Makefile (issue 16): `make deploy VPC_ID=… SUBNET_IDS=… SG_ID=…` passes the CDK context keys
the app reads, and the quick start runs jsii quietly on a Node it no longer supports."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make on PATH")


def _make(*args: str, extra: str | None = None) -> str:
    cmd = ["make", "--no-print-directory", "-C", str(REPO)]
    if extra is not None:
        cmd += ["-f", "Makefile", "-f", "-"]
    return subprocess.run([*cmd, *args], input=extra, capture_output=True, text=True, check=True).stdout


def _deploy_command(*variables: str) -> list[str]:
    lines = [line for line in _make("-n", "deploy", *variables).splitlines() if "cdk deploy" in line]
    assert len(lines) == 1, lines
    return shlex.split(lines[0])


def _context(words: list[str]) -> dict[str, str]:
    return dict(words[i + 1].split("=", 1) for i, w in enumerate(words) if w == "-c")


def test_deploy_passes_the_vpc_context_the_app_reads():
    words = _deploy_command("VPC_ID=vpc-0abc", "SUBNET_IDS=subnet-0aaa,subnet-0bbb", "SG_ID=sg-0abc",
                            "CDK_ARGS=-c notify_emails=dba@example.com")
    context = _context(words)
    assert context == {"vpc_id": "vpc-0abc", "subnet_ids": "subnet-0aaa,subnet-0bbb",
                       "security_group_id": "sg-0abc", "notify_emails": "dba@example.com"}
    from aws_cdk import App

    from cutover_prep_cdk.config import Config

    # the keys are the app's own: the same values through the CDK's context give that Config
    app = App(context={**context, "skip_layer_build": True})
    config = Config.from_node(app.node)
    assert (config.vpc_id, config.subnet_ids, config.security_group_id) == (
        "vpc-0abc", ("subnet-0aaa", "subnet-0bbb"), "sg-0abc")


def test_deploy_without_variables_passes_no_context():
    assert _context(_deploy_command()) == {}


def test_jsii_is_quiet_on_node_versions_it_deprecates_or_no_longer_supports():
    env = _make("jsii-env", extra="jsii-env:\n\t@echo $$JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION "
                                  "$$JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION\n")
    assert env.split() == ["1", "20"]


def test_make_test_runs_two_workers_each_module_whole_in_one():
    """Issue 24 §4: `make test` (what CI runs) uses two pytest-xdist workers, a test module whole in one."""
    lines = [line for line in _make("-n", "test", "PYTEST_ARGS=-q").splitlines() if " -m pytest " in line]
    assert len(lines) == 1 and "-n 2 --dist loadfile" in lines[0] and lines[0].endswith("-q"), lines


def test_make_test_lets_its_processes_share_compiled_bytecode():
    """Issue 24 §4, speed: with PYTHONDONTWRITEBYTECODE in the environment (set on these machines) every Python
    process of the suite (two workers, each CLI a test starts) compiled the project and the tests from source
    again. `make test` writes and reads bytecode under .build/pycache (Python's PYTHONPYCACHEPREFIX: "Python
    will write .pyc files in a mirror directory tree at this path, instead of in __pycache__ directories within
    the source tree"), so the source tree stays clean."""
    for target in ("test", "test-unit", "test-integration", "test-infra"):
        lines = [line for line in _make("-n", target, "PYTEST_ARGS=-q").splitlines() if " -m pytest " in line]
        assert len(lines) == 1, (target, lines)
        words = shlex.split(lines[0])
        assert "PYTHONDONTWRITEBYTECODE=" in words, (target, words)  # empty: Python writes bytecode
        assert f"PYTHONPYCACHEPREFIX={REPO / '.build' / 'pycache'}" in words, (target, words)


def _fake_root_without_fuse(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A PATH where `id -u` says root, fuse3 is not installed and `apt-get` only logs that it ran (to the log
    that also takes make's stderr, so the order of the two is the order they happened in)."""
    import os

    bin_dir, log = tmp_path / "bin", tmp_path / "log"
    bin_dir.mkdir()
    for tool in ("grep",):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    (bin_dir / "id").write_text("#!/bin/sh\necho 0\n")
    (bin_dir / "apt-get").write_text(f"#!/bin/sh\necho \"apt-get $*\" >> {log}\n")
    for f in ("id", "apt-get"):
        (bin_dir / f).chmod(0o755)
    return {**os.environ, "PATH": str(bin_dir)}, log


def test_make_demo_says_before_it_installs_a_system_package(tmp_path):
    """Issue 33 §6: `make demo` ran `make fuse` with every line hidden, so as root it installed Debian's fuse3
    without a word. It now says so on stderr, before apt-get runs (and says nothing when nothing is installed)."""
    env, log = _fake_root_without_fuse(tmp_path)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / ".installed-stamp").touch()  # newer than pyproject.toml: nothing to install
    (venv / "bin" / "cutover-prep").write_text(f"#!/bin/sh\necho \"cutover-prep $*\" >> {log}\n")
    (venv / "bin" / "cutover-prep").chmod(0o755)
    with log.open("w") as err:
        subprocess.run(["/usr/bin/env", shutil.which("make"), "--no-print-directory", "-C", str(REPO),
                        f"VENV={venv}", "demo"], env=env, stdout=subprocess.DEVNULL, stderr=err, check=True)
    lines = log.read_text().splitlines()
    said = [i for i, line in enumerate(lines) if line.startswith("make fuse: installing Debian's fuse3")]
    installed = [i for i, line in enumerate(lines) if line.startswith("apt-get install")]
    assert said and installed and said[0] < installed[0], lines
    assert lines[-1] == "cutover-prep local", lines


def test_make_synth_names_the_template_it_wrote():
    lines = _make("-n", "synth").splitlines()
    assert any("make synth: wrote" in line and "cdk.out/*.template.json" in line for line in lines), lines


def test_make_destroy_deletes_the_stack_with_the_deploy_context():
    lines = [line for line in _make("-n", "destroy", "VPC_ID=vpc-0abc", "SUBNET_IDS=subnet-0aaa").splitlines()
             if "cdk destroy" in line]
    assert len(lines) == 1, lines
    assert _context(shlex.split(lines[0])) == {"vpc_id": "vpc-0abc", "subnet_ids": "subnet-0aaa"}
