#!/usr/bin/env bash
# Installs hybridsens into a temporary prefix and builds an external consumer against it, the way
# a user would, then runs it (it solves a small problem and checks the result).
#
#   consumer_test.sh BUILD SRC [PROJECT] [--kind shared|static] [--via cmake|pkg-config]
#
# BUILD is the build tree under test, SRC the source tree. PROJECT is tests/PROJECT (default
# consumer), built with find_package(hybridsens) (--via cmake, the default) or by a single
# compiler command with $(pkg-config --cflags --libs hybridsens) (--via pkg-config).
# --kind: when it differs from BUILD's own BUILD_SHARED_LIBS, a second copy of the library alone
# is configured and built with the other kind in BUILD/consumer-KIND-lib (kept between runs, so
# that reruns are incremental; same compiler, launcher and build type as BUILD), and that copy is
# installed instead. The script checks that the prefix holds that kind of library only.
set -euo pipefail
build="$1"; src="$2"; shift 2
project=consumer; kind=""; via=cmake
while [ $# -gt 0 ]; do
  case "$1" in
    --kind) kind="$2"; shift 2 ;;
    --via) via="$2"; shift 2 ;;
    *) project="$1"; shift ;;
  esac
done

cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
case "$(cache_value BUILD_SHARED_LIBS)" in ON|on|1|TRUE|true|YES|yes) own_kind=shared ;; *) own_kind=static ;; esac
kind="${kind:-$own_kind}"

tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
lib_build="$build"
if [ "$kind" != "$own_kind" ]; then
  lib_build="$build/consumer-$kind-lib"
  shared=OFF; [ "$kind" = shared ] && shared=ON
  echo "building a $kind copy of the library in $lib_build"
  # The core library and what installs with it (no AD component: the consumer tests the core;
  # find_package_consumer_ad covers the AD component in the main build).
  cmake -S "$src" -B "$lib_build" -DBUILD_SHARED_LIBS=$shared \
    -DCMAKE_BUILD_TYPE="$(cache_value CMAKE_BUILD_TYPE)" \
    -DCMAKE_C_COMPILER="$(cache_value CMAKE_C_COMPILER)" -DCMAKE_CXX_COMPILER="$(cache_value CMAKE_CXX_COMPILER)" \
    -DCMAKE_C_COMPILER_LAUNCHER="$(cache_value CMAKE_C_COMPILER_LAUNCHER)" \
    -DCMAKE_CXX_COMPILER_LAUNCHER="$(cache_value CMAKE_CXX_COMPILER_LAUNCHER)" \
    -DHYBRIDSENS_ALLOW_UNTESTED_PETSC="$(cache_value HYBRIDSENS_ALLOW_UNTESTED_PETSC)" \
    -DHYBRIDSENS_WITH_AD=OFF -DHYBRIDSENS_BUILD_TESTS=OFF -DHYBRIDSENS_BUILD_EXAMPLES=OFF -DHYBRIDSENS_BUILD_BENCH=OFF >"$tmp/lib.log" 2>&1 &&
  cmake --build "$lib_build" -j 2 >>"$tmp/lib.log" 2>&1 ||
    { cat "$tmp/lib.log"; echo "FAIL: the $kind copy of the library did not build"; exit 1; }
fi
cmake --install "$lib_build" --prefix "$prefix" >/dev/null

libdir="$(cd "$(dirname "$(find "$prefix" -name hybridsens.pc)")/.." && pwd)"
if [ "$kind" = shared ]; then
  ls "$libdir"/libhybridsens.so.* >/dev/null && [ ! -e "$libdir/libhybridsens.a" ] || { echo "FAIL: expected libhybridsens.so only in $libdir"; exit 1; }
else
  [ -e "$libdir/libhybridsens.a" ] && ! ls "$libdir"/libhybridsens.so* >/dev/null 2>&1 || { echo "FAIL: expected libhybridsens.a only in $libdir"; exit 1; }
fi

if [ "$via" = cmake ]; then
  cmake -S "$src/tests/$project" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$tmp/consumer" >/dev/null
else
  # Only what a non-CMake user has: the .pc file and a C++ compiler (the one of BUILD, not an
  # MPI wrapper, so that the .pc must provide the MPI flags too).
  export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  echo "pkg-config hybridsens $(pkg-config --modversion hybridsens): $(pkg-config --cflags --libs hybridsens)"
  mkdir -p "$tmp/consumer"
  # shellcheck disable=SC2046  # the flags are meant to be split
  "$(cache_value CMAKE_CXX_COMPILER)" -std=c++17 "$src/tests/$project/main.cpp" -o "$tmp/consumer/consumer" \
    $(pkg-config --cflags --libs hybridsens)
  export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [ "$kind" = shared ]; then
  # The consumer must run on the installed shared library, not on one of a build tree.
  ldd "$tmp/consumer/consumer" | grep "libhybridsens.so.* => $prefix/" >/dev/null ||
    { echo "FAIL: the consumer does not load libhybridsens from $prefix:"; ldd "$tmp/consumer/consumer" | grep hybridsens; exit 1; }
fi
out="$("$tmp/consumer/consumer")"; echo "$out"
if [ "$project" = consumer ]; then
  # The version compiled in (hybridsens/version.hpp) is the version of the installed package.
  version="$(sed -n 's/^Version: //p' "$libdir/pkgconfig/hybridsens.pc")"
  grep -q "consumer of hybridsens $version:" <<<"$out" || { echo "FAIL: the consumer does not report version $version"; exit 1; }
fi
echo "consumer ($kind library, via $via): OK"
