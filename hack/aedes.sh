#!/usr/bin/env bash
# Installs aedes (a Node.js MQTT 3.1.1 broker from npm, not written here) at the versions
# hack/aedes/package-lock.json pins, with `npm ci`, into bin/tools/aedes-<version>/, beside a copy
# of hack/aedes/server.mjs, and prints the path of that server.mjs. Tests run it with node
# (internal/testenv's Aedes) and point `msgbench run` at it as spec.broker.external.
set -euo pipefail
VERSION=1.2.0 # hack/aedes/package.json's aedes
root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/hack/aedes"
dir="$root/bin/tools/aedes-$VERSION"
command -v node >/dev/null || { echo "aedes: node is not installed (Node.js 20 or later, with npm)" >&2; exit 1; }
command -v npm >/dev/null || { echo "aedes: npm is not installed (apt-get install npm)" >&2; exit 1; }
# aedes 1.x needs Node.js 20 or later (its package.json's engines); Debian 12's nodejs is 18.
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || { echo "aedes: $VERSION needs Node.js >= 20, this is $(node --version)" >&2; exit 1; }
installed() {
  [ -f "$dir/node_modules/aedes/package.json" ] && cmp -s "$src/package-lock.json" "$dir/package-lock.json" &&
    [ "$(node -p "require('$dir/node_modules/aedes/package.json').version")" = "$VERSION" ]
}
if ! installed; then
  echo "aedes: installing $VERSION into $dir (npm ci)" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$src/package.json" "$src/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
# The script is copied each time (cheap), so an edit of hack/aedes/server.mjs is run at once.
cmp -s "$src/server.mjs" "$dir/server.mjs" || cp "$src/server.mjs" "$dir/server.mjs"
echo "$dir/server.mjs"
