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

# The runtime ships boto3/botocore/s3transfer; aws-xray-sdk (tracer extra) pulls botocore in
# again, which would only make the layer bigger and shadow the runtime's SDK.
for pkg in boto3 botocore s3transfer; do
  rm -rf "$out/python/$pkg" "$out/python/$pkg"-*.dist-info
done
rm -rf "$out/python/bin"  # console scripts of the wheels; nothing runs them in Lambda
find "$out/python" -name __pycache__ -type d -prune -exec rm -rf {} +

size_mb=$(du -sm "$out" | cut -f1)
if [ "$size_mb" -gt 240 ]; then
  echo "layer is ${size_mb} MB unzipped; Lambda allows 250 MB for function and layers together" >&2
  exit 1
fi
echo "Lambda layer built in ${out#"$root"/} (${size_mb} MB unzipped)"
