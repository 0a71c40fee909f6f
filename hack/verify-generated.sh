#!/usr/bin/env bash
# Fails when a generated file is stale: regenerates everything (make generate manifests) and
# compares checksums of the generated files before and after. Works in a dirty work tree too; on
# failure the files are now up to date, so commit them.
set -euo pipefail
cd "$(dirname "$0")/.."

generated() {
  find api -name 'zz_generated.*.go'
  find config/crd/bases config/rbac -type f 2>/dev/null || true
}
sums() { generated | LC_ALL=C sort | xargs -r sha256sum; }

before=$(sums)
make --no-print-directory generate manifests >/dev/null
after=$(sums)
if [ "$before" != "$after" ]; then
  echo "verify-generated: generated files were stale; \`make generate manifests\` changed:" >&2
  diff <(echo "$before") <(echo "$after") | sed -n 's/^> [0-9a-f]*  /  /p' >&2 || true
  exit 1
fi
echo "verify-generated: generated files are up to date"
