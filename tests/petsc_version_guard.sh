#!/usr/bin/env bash
# hybridsens supports PETSc 3.18.x only. This checks the three places that refuse another PETSc,
# each with a fake PETSc of another version (the real one's files, another version number):
#  1. configuring hybridsens (a PETSc.pc saying 3.19.0 / 3.17.2 first in PKG_CONFIG_PATH) fails
#     with a message naming the version found and the supported one, unless
#     -DHYBRIDSENS_ALLOW_UNTESTED_PETSC=ON, which makes it a warning;
#  2. compiling against the headers (hybridsens/detail/petsc_version.hpp, via hybridsens.hpp)
#     with a petscversion.h saying 3.19.0 stops with #error; the real one compiles;
#  3. find_package(hybridsens) of an installed copy fails when pkg-config finds PETSc 3.19.0.
#   petsc_version_guard.sh BUILD SRC
set -euo pipefail
build="$1"; src="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
fail() { echo "FAIL: $*"; exit 1; }
says() { tr -s ' \n' '  ' <"$1" | grep -- "$2" >/dev/null; }  # says FILE TEXT: CMake wraps its messages

real_pc="$(pkg-config --variable=pcfiledir PETSc)/PETSc.pc"
fake_petsc() {  # fake_petsc VERSION → a directory with a PETSc.pc reporting VERSION
  mkdir -p "$tmp/pc-$1"
  sed "s/^Version:.*/Version: $1/" "$real_pc" >"$tmp/pc-$1/PETSc.pc"
  [ "$(PKG_CONFIG_PATH="$tmp/pc-$1" pkg-config --modversion PETSc)" = "$1" ] || fail "the fake PETSc.pc is not picked up"
  echo "$tmp/pc-$1"
}
configure() {  # configure PKG_CONFIG_DIR BUILD_DIR [cmake args]: the library alone, output in BUILD_DIR.log
  local pcdir="$1" dir="$2"; shift 2
  PKG_CONFIG_PATH="$pcdir" cmake -S "$src" -B "$dir" -DHYBRIDSENS_BUILD_TESTS=OFF -DHYBRIDSENS_BUILD_EXAMPLES=OFF \
    -DHYBRIDSENS_BUILD_BENCH=OFF -DHYBRIDSENS_WITH_AD=OFF "$@" >"$dir.log" 2>&1
}

# 1. Configure time.
for v in 3.19.0 3.17.2; do
  if configure "$(fake_petsc $v)" "$tmp/refused-$v"; then cat "$tmp/refused-$v.log"; fail "configure accepted PETSc $v"; fi
  says "$tmp/refused-$v.log" "supports PETSc 3.18.x only" && says "$tmp/refused-$v.log" "found PETSc $v" ||
    { cat "$tmp/refused-$v.log"; fail "configure with PETSc $v failed without the PETSc version message"; }
  echo "configure with PETSc $v: refused, as it must be"
done
configure "$(fake_petsc 3.19.0)" "$tmp/allowed" -DHYBRIDSENS_ALLOW_UNTESTED_PETSC=ON ||
  { cat "$tmp/allowed.log"; fail "configure with PETSc 3.19.0 and HYBRIDSENS_ALLOW_UNTESTED_PETSC=ON failed"; }
says "$tmp/allowed.log" "found PETSc 3.19.0" || fail "no warning with HYBRIDSENS_ALLOW_UNTESTED_PETSC=ON"
grep -q "^#define HYBRIDSENS_ALLOW_UNTESTED_PETSC" "$tmp/allowed/include/hybridsens/version.hpp" ||
  fail "version.hpp does not record HYBRIDSENS_ALLOW_UNTESTED_PETSC=ON"
echo "configure with PETSc 3.19.0 and HYBRIDSENS_ALLOW_UNTESTED_PETSC=ON: a warning"

# 2. Compile time: hybridsens.hpp with a petscversion.h of 3.19.0 ahead of the real one.
cxx="$(cache_value CMAKE_CXX_COMPILER)"
petsc_include="$(pkg-config --variable=includedir PETSc)"
mpi_include="$(cache_value MPI_C_HEADER_DIR)"
mkdir -p "$tmp/fake-include"
sed -e 's/^#define PETSC_VERSION_MINOR .*/#define PETSC_VERSION_MINOR 19/' \
    -e 's/^#define PETSC_VERSION_SUBMINOR .*/#define PETSC_VERSION_SUBMINOR 0/' \
    "$petsc_include/petscversion.h" >"$tmp/fake-include/petscversion.h"
grep -q "^#define PETSC_VERSION_MINOR *19" "$tmp/fake-include/petscversion.h" || fail "could not make a fake petscversion.h"
echo '#include <hybridsens/hybridsens.hpp>' >"$tmp/use.cpp"
compile() {  # compile EXTRA_INCLUDE_DIR [flags]
  local extra="$1"; shift
  "$cxx" -std=c++17 -fsyntax-only ${extra:+-I"$extra"} -I"$build/include" -I"$src/include" -I"$petsc_include" \
    -I"$mpi_include" "$@" "$tmp/use.cpp" >"$tmp/compile.log" 2>&1
}
compile "" || { cat "$tmp/compile.log"; fail "hybridsens.hpp does not compile with the real PETSc"; }
if compile "$tmp/fake-include"; then fail "hybridsens.hpp compiled with PETSc 3.19.0 headers"; fi
grep -q "#error.*supports PETSc 3.18.x only" "$tmp/compile.log" || { cat "$tmp/compile.log"; fail "no #error naming PETSc 3.18"; }
compile "$tmp/fake-include" -DHYBRIDSENS_ALLOW_UNTESTED_PETSC ||
  { cat "$tmp/compile.log"; fail "HYBRIDSENS_ALLOW_UNTESTED_PETSC does not lift the #error"; }
echo "hybridsens.hpp with PETSc 3.19.0 headers: #error, as it must be (none with HYBRIDSENS_ALLOW_UNTESTED_PETSC)"

# 3. find_package of an installed copy (this build's) when pkg-config finds PETSc 3.19.0.
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
if PKG_CONFIG_PATH="$(fake_petsc 3.19.0)" cmake -S "$src/tests/consumer" -B "$tmp/consumer" \
     -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/consumer.log" 2>&1; then
  fail "find_package(hybridsens) accepted PETSc 3.19.0"
fi
says "$tmp/consumer.log" "built against PETSc 3.18" && says "$tmp/consumer.log" "finds PETSc 3.19.0" ||
  { cat "$tmp/consumer.log"; fail "find_package(hybridsens) failed without the PETSc version message"; }
echo "find_package(hybridsens) with PETSc 3.19.0: refused, as it must be"
