#!/usr/bin/env bash
# Installs hybridsens from the build tree into a temporary prefix, builds the consumer
# project in tests/consumer (or tests/$3) with find_package(hybridsens), and runs it.
set -euo pipefail
build="$1"; src="$2"; project="${3:-consumer}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/tests/$project" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/consumer"
