#!/usr/bin/env bash
# Build the Lambda dependency layer without Docker: pip downloads the manylinux wheels for
# the Lambda platform (Python 3.12, x86_64) into <out>/python, which is the layout a
# LayerVersion needs. The CDK app reads it from context layer_dir (default .build/layer).
#
#   scripts/build_lambda_layer.sh [OUT_DIR]        (default .build/layer)
#   PYTHON=.venv/bin/python scripts/build_lambda_layer.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/.build/layer}"
python="${PYTHON:-python3}"
requirements="$root/lambdas/requirements.txt"

rm -rf "$out"
mkdir -p "$out/python"
"$python" -m pip install --quiet --disable-pip-version-check --no-compile \
  --platform manylinux2014_x86_64 --only-binary=:all: --implementation cp --python-version 3.12 \
  --target "$out/python" -r "$requirements"

# boto3/botocore stay in the layer (requirements.txt pins them): the runtime's SDK may be older than
# the RDS model with StorageOperationStatus / StorageOperationPercentProgress, and an older botocore
# drops those fields from DescribeDBInstances without a word.
rm -rf "$out/python/bin"  # console scripts of the wheels; nothing runs them in Lambda
find "$out/python" -name __pycache__ -type d -prune -exec rm -rf {} +

size_mb=$(du -sm "$out" | cut -f1)
if [ "$size_mb" -gt 240 ]; then
  echo "layer is ${size_mb} MB unzipped; Lambda allows 250 MB for function and layers together" >&2
  exit 1
fi
echo "Lambda layer built in ${out#"$root"/} (${size_mb} MB unzipped)"
