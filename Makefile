# The single entry point. Needs only Python >= 3.11 and Node 22 or 24 on the machine (Node 20 works;
# jsii no longer supports it and prints an end-of-life banner, silenced below: docs/deploy.md#node).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
NODE_STAMP := node_modules/.installed-stamp
# checkov in a virtualenv of its own: its pins (boto3==1.35.49) conflict with the project's (tools/checkov-requirements.txt)
CHECKOV_VENV := .venv-checkov
CHECKOV := $(CHECKOV_VENV)/bin/checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed-stamp
PYTEST_ARGS ?=
# Two pytest-xdist workers (a 2-core machine); --dist loadfile: a test module runs whole in one worker, in
# order, so its module-scoped fixtures are made once; --no-loadscope-reorder: the modules are handed out in
# collection order, where tests/conftest.py puts the slowest first (SLOWEST_FIRST), so that the two workers end
# together. PYTEST_WORKERS=0 runs in one process.
PYTEST_WORKERS ?= 2
PYTEST_XDIST := -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder
# The tests' Python processes (two workers, and every CLI a test starts) share compiled bytecode in .build/pycache,
# also where the environment says PYTHONDONTWRITEBYTECODE: without it each process compiled the project and the
# tests from source again (a worker's collection: 7.8 s instead of 3.5 s).
PYTEST_ENV := PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(CURDIR)/.build/pycache
# jsii (the CDK's Python bridge) prints a boxed warning on every start under a Node it deprecates
# or no longer supports. Quiet for the quick start; set either to empty to see it again.
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION ?= 1
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION ?= 20
# make deploy VPC_ID=vpc-... SUBNET_IDS=subnet-a,subnet-b SG_ID=sg-... [CDK_ARGS='-c notify_emails=...']
VPC_ID ?=
SUBNET_IDS ?=
SG_ID ?=
CDK_ARGS ?=
DEPLOY_CONTEXT := $(if $(VPC_ID),-c vpc_id=$(VPC_ID)) $(if $(SUBNET_IDS),-c subnet_ids=$(SUBNET_IDS)) \
                  $(if $(SG_ID),-c security_group_id=$(SG_ID))

.PHONY: help install browser fuse demo test test-unit test-integration test-infra lint synth deploy destroy build-lambda bench clean

help:
	@echo "make demo     run the whole workflow locally on an embedded sample database"
	@echo "make test     unit, integration (PostgreSQL, moto workflow) and infrastructure tests"
	@echo "make lint     ruff + asl-validator"
	@echo "make synth    build the Lambda layer and synthesize the CDK app (cdk-nag on every synth, then cfn-lint and checkov)"
	@echo "make deploy   deploy to the AWS account of your current credentials (VPC_ID=... SUBNET_IDS=... SG_ID=...)"
	@echo "make destroy  delete the deployed stack (what it retains, and how to remove it: docs/deploy.md#teardown)"
	@echo "make bench    benchmarks (warm-up rate, planning 1M extents, sweep overhead, report rendering)"
	@echo "make browser  install Debian's chromium for the report's browser test (root; skipped without it)"
	@echo "make fuse     install Debian's fuse3 for the emulated restored volume (root; the demo runs without it)"

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; sys.exit("Python >= 3.11 is required") if sys.version_info < (3, 11) else None'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[local,dev]'
	touch $@

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(CHECKOV_STAMP): tools/checkov-requirements.txt
	test -x $(CHECKOV_VENV)/bin/python || $(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(CHECKOV_VENV)/bin/python -m pip install --quiet -r tools/checkov-requirements.txt
	touch $@

install: $(STAMP) $(NODE_STAMP) $(CHECKOV_STAMP)

demo: $(STAMP)
	@$(MAKE) --no-print-directory fuse 3>&2 >/dev/null 2>&1 || true  # the emulated volume when it can be had; fd 3: its "installing" line
	$(VENV)/bin/cutover-prep local

test: $(STAMP) $(NODE_STAMP) $(CHECKOV_STAMP)
	$(PYTEST_ENV) POWERTOOLS_TRACE_DISABLED=1 POWERTOOLS_METRICS_DISABLED=true $(PY) -m pytest $(PYTEST_XDIST) $(PYTEST_ARGS)

test-unit: $(STAMP)
	$(PYTEST_ENV) $(PY) -m pytest $(PYTEST_XDIST) tests/unit $(PYTEST_ARGS)

test-integration: $(STAMP)
	$(PYTEST_ENV) $(PY) -m pytest $(PYTEST_XDIST) tests/integration $(PYTEST_ARGS)

test-infra: $(STAMP) $(NODE_STAMP) $(CHECKOV_STAMP)
	$(PYTEST_ENV) $(PY) -m pytest $(PYTEST_XDIST) tests/infrastructure $(PYTEST_ARGS)

lint: $(STAMP) $(NODE_STAMP)
	$(VENV)/bin/ruff check lambdas cdk tests benchmarks
	for f in statemachines/*.asl.json; do node_modules/.bin/asl-validator --json-path "$$f" || exit 1; done

LAYER_STAMP := .build/layer/.built-stamp
$(LAYER_STAMP): lambdas/requirements.txt scripts/build_lambda_layer.sh | $(STAMP)
	PYTHON=$(PY) bash scripts/build_lambda_layer.sh
	touch $@

build-lambda: $(LAYER_STAMP)

synth: $(STAMP) $(NODE_STAMP) $(CHECKOV_STAMP) build-lambda
	npx cdk synth --quiet
	$(VENV)/bin/cfn-lint --ignore-checks W3005 -- cdk.out/*.template.json
	$(CHECKOV) --quiet --compact --skip-download --framework cloudformation -f cdk.out/*.template.json
	@for f in cdk.out/*.template.json; do echo "make synth: wrote $$f"; done

deploy: $(STAMP) $(NODE_STAMP) build-lambda
	npx cdk deploy --require-approval broadening $(strip $(DEPLOY_CONTEXT) $(CDK_ARGS))

# Deletes the stack; the evidence bucket, the tables, the KMS keys and the log groups are retained (docs/deploy.md#teardown)
destroy: $(STAMP) $(NODE_STAMP) build-lambda
	npx cdk destroy $(strip $(DEPLOY_CONTEXT) $(CDK_ARGS))

browser:
	@command -v chromium >/dev/null 2>&1 && echo "chromium: $$(command -v chromium)" || { \
	  test "$$(id -u)" = 0 || { echo "make browser: run as root, or apt-get install chromium yourself" >&2; exit 1; }; \
	  (apt-get install -y --no-install-recommends chromium || \
	   (apt-get update && apt-get install -y --no-install-recommends chromium)) >/dev/null && command -v chromium; }

fuse:
	@command -v fusermount3 >/dev/null 2>&1 && /sbin/ldconfig -p | grep -q libfuse3.so.3 && echo "fuse3: $$(command -v fusermount3)" || { \
	  test "$$(id -u)" = 0 || { echo "make fuse: run as root, or apt-get install fuse3 yourself" >&2; exit 1; }; \
	  msg="make fuse: installing Debian's fuse3 with apt-get, for the emulated restored volume (docs/local.md)"; \
	  { echo "$$msg" >&3; } 2>/dev/null || echo "$$msg" >&2; \
	  (apt-get install -y --no-install-recommends fuse3 || \
	   (apt-get update && apt-get install -y --no-install-recommends fuse3)) >/dev/null && command -v fusermount3; }

bench: $(STAMP)
	$(PY) benchmarks/plan_extents.py
	$(PY) benchmarks/warmup_rate.py
	$(PY) benchmarks/sweep_overhead.py
	$(PY) benchmarks/report_render.py
	$(PY) benchmarks/emulator.py
	$(PY) benchmarks/hydration.py

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) node_modules cdk.out .build out .pytest_cache
