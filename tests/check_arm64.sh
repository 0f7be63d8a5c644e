#!/usr/bin/env bash
# The AArch64 build (NEON kernels) under qemu-aarch64: the kernel tests pass there, and --json
# writes the very bytes the build of this machine writes: the numbers do not depend on the CPU.
# Needs the cross compiler, qemu-user and the arm64 libraries (bash .ci/install-deps test);
# without them this suite fails, it does not skip. Run from `make test`, after ./attnstep.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cross=${CROSS_ARM64:-aarch64-linux-gnu-}
build=${BUILD:-build}/arm64
failures=0
missing=""
command -v "${cross}gcc" >/dev/null || missing="$missing ${cross}gcc (gcc-aarch64-linux-gnu)"
command -v qemu-aarch64 >/dev/null || missing="$missing qemu-aarch64 (qemu-user)"
[ -e /lib/ld-linux-aarch64.so.1 ] || missing="$missing the arm64 C library (libc6:arm64)"
if [ -n "$missing" ]; then
    echo "FAIL cannot test the AArch64 build, missing:$missing; install with: bash .ci/install-deps test"
    exit 1
fi
[ -x ./attnstep ] || { echo "FAIL ./attnstep is not built (make attnstep)"; exit 1; }

# Its own flags and no make flags of the caller: `make test-asan` must not hand the cross build
# its sanitizers (qemu-user cannot run them). No -g: nothing debugs these binaries, and the
# debugging information is a good part of the cross build's time; the code is the same.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -j2 cross-arm64 \
        CFLAGS="-O2" CROSS_ARM64="$cross" BUILD="${BUILD:-build}" >"$tmp/build.log" 2>&1; then
    cat "$tmp/build.log"
    echo "FAIL make cross-arm64"
    exit 1
fi
echo "ok   make cross-arm64 builds the program and the kernel tests for AArch64"

runs_neon() {  # the tests are worth little if the NEON code is not the one they run
    qemu-aarch64 "$build/tests/test_paths" >"$tmp/paths.log" 2>&1
    local code=$?
    [ $code -eq 0 ] || { cat "$tmp/paths.log"; echo "exit status $code"; return 1; }
    grep -q "^products on this processor: neon code$" "$tmp/paths.log" ||
        { cat "$tmp/paths.log"; echo "the products did not run the NEON code"; return 1; }
}
kernel_tests() {
    qemu-aarch64 "$build/tests/test_kernels" >"$tmp/kernels.log" 2>&1
    local code=$?
    [ $code -eq 0 ] || { cat "$tmp/kernels.log"; echo "exit status $code"; return 1; }
}
check "test_paths under qemu: NEON and portable code, 1 and 2 threads, the same bits" runs_neon
check "test_kernels under qemu: NEON against the fused textbook loops, bit for bit" kernel_tests

# The lesson with most heads, and one large enough for whole NEON tiles and long softmax rows
# (203 tokens: no multiple of a tile; d_model 96 over 6 heads).
bash tests/bench/make_lesson.sh 203 96 6 >"$tmp/mid.yaml"
same_json() {  # same_json LESSON [ENV...]: arm64's --json (under ENV) is this build's, byte for byte
    local lesson=$1; shift
    ./attnstep --json "$lesson" >"$tmp/here.json" || { echo "exit status $?: ./attnstep"; return 1; }
    env "$@" qemu-aarch64 "$build/attnstep" --json "$lesson" >"$tmp/arm64.json" ||
        { echo "exit status $?: $build/attnstep under qemu-aarch64"; return 1; }
    cmp "$tmp/here.json" "$tmp/arm64.json"
}
check "--json of four_heads.yaml: AArch64 (NEON) = this machine" same_json lessons/four_heads.yaml
check "--json of 203 tokens, d_model 96: AArch64 (NEON) = this machine" same_json "$tmp/mid.yaml"
check "--json of 203 tokens: AArch64 portable, 2 threads = this machine" \
    same_json "$tmp/mid.yaml" ATTNSTEP_PORTABLE=1 ATTNSTEP_THREADS=2

echo "arm64: $failures failed"
[ "$failures" -eq 0 ]
