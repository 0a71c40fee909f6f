#!/usr/bin/env bash
# Fetches a pinned Apache ActiveMQ Artemis binary distribution from Maven Central
# (org.apache.activemq:apache-artemis:<version>:tar.gz:bin), unpacks it into
# bin/artemis/<version>/apache-artemis-<version> and prints that folder (the Artemis home: lib/
# holds artemis-boot.jar and the broker's jars). brokers/artemis runs a broker from it with
# `java -cp lib/artemis-boot.jar org.apache.activemq.artemis.boot.Artemis run` and etc files it
# renders itself (no `artemis create`, no shell scripts). The first run downloads ~70 MB; later
# runs print the cached folder at once.
#
# The version matches the official image pinned in controllers/resources (apache/activemq-artemis),
# so local runs and the operator's pods run the same broker. Artemis 2.40 needs Java 17+.
set -euo pipefail
VERSION=${ARTEMIS_VERSION:-2.40.0}
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/bin/artemis/$VERSION"
home="$dir/apache-artemis-$VERSION"
mkdir -p "$dir"
# Test packages run in parallel and may all call this on a fresh clone: one fetches, the others
# wait for it.
exec 9>"$dir.lock"
flock 9
if [ ! -f "$dir/.complete" ]; then
  command -v java >/dev/null || { echo "artemis: java not found: install a JDK 17+ (Debian: apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
  command -v mvn >/dev/null || { echo "artemis: mvn not found: install Maven (Debian: apt-get install maven)" >&2; exit 1; }
  echo "artemis: fetching Apache ActiveMQ Artemis $VERSION from Maven Central" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mvn -B -q -Dstyle.color=never dependency:copy \
    -Dartifact="org.apache.activemq:apache-artemis:$VERSION:tar.gz:bin" \
    -DoutputDirectory="$tmp" -Dmdep.stripVersion=false >&2
  tar -xzf "$tmp/apache-artemis-$VERSION-bin.tar.gz" -C "$tmp"
  [ -f "$tmp/apache-artemis-$VERSION/lib/artemis-boot.jar" ] || { echo "artemis: $VERSION: lib/artemis-boot.jar missing from the distribution" >&2; exit 1; }
  rm -rf "$home"
  mv "$tmp/apache-artemis-$VERSION" "$home"
  touch "$dir/.complete"
fi
echo "$home"
