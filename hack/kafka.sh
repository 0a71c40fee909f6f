#!/usr/bin/env bash
# Fetches a pinned Apache Kafka release from Maven Central — the broker (kafka_2.13), its tools
# (kafka-tools: ProducerPerformance, ConsumerPerformance) and their runtime dependencies — into
# bin/kafka/<version>/libs and prints that folder. brokers/kafka runs a single-node KRaft broker
# from it with `java -cp 'libs/*' kafka.Kafka`. The first run takes a minute or two (Maven
# resolves ~80 jars); later runs print the cached folder at once.
#
# The version is the newest Kafka that Strimzi 1.2.0 supports, so local runs and the operator's
# Strimzi clusters run the same broker (controllers/resources/kafka.go pins the same version).
set -euo pipefail
VERSION=${KAFKA_VERSION:-4.3.1}
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/bin/kafka/$VERSION"
libs="$dir/libs"
mkdir -p "$(dirname "$dir")"
# Test packages run in parallel and may all call this on a fresh clone: one fetches, the others
# wait for it.
exec 9>"$dir.lock"
flock 9
if [ ! -f "$dir/.complete" ]; then
  command -v java >/dev/null || { echo "kafka: java not found: install a JDK 17+ (Debian: apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
  command -v mvn >/dev/null || { echo "kafka: mvn not found: install Maven (Debian: apt-get install maven)" >&2; exit 1; }
  echo "kafka: fetching Apache Kafka $VERSION and its dependencies from Maven Central" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  # A throw-away project whose only purpose is to let Maven resolve the runtime classpath.
  cat >"$tmp/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.msgbench</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$VERSION</version></dependency>
    <!-- the broker logs through SLF4J 2; the release tarball ships Log4j 2 as its backend (named
         here, or Maven's nearest-wins picks a dependency's SLF4J 1.7 and logging goes nowhere) -->
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>2.0.17</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j2-impl</artifactId><version>2.25.3</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>2.25.3</version></dependency>
  </dependencies>
</project>
EOF
  mkdir -p "$dir"
  mvn -B -q -Dstyle.color=never -f "$tmp/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp/libs" >&2
  rm -rf "$libs"
  mv "$tmp/libs" "$libs"
  ls "$libs" | sort >"$dir/jars.txt"
  touch "$dir/.complete"
fi
echo "$libs"
