#!/usr/bin/env bash
# The mutation test behind `make mutants`: puts each bug of tests/mutants/list into a copy of the
# tree (build/mutants/tree, so the working tree is never touched), builds it, runs the suites that
# must catch it, and reverts it. Prints one line per mutant and the score "caught N of M".
# MUTANTS="name …" runs only those; MUTANTS_FULL=1 runs the whole `make test` for each mutant;
# MUTANTS_LIST=FILE reads another list (tests/mutants/flips: the sampled comparison flips).
# Exit status 0 only when every mutant listed was caught. Slow: not part of `make test`.
set -u
cd "$(dirname "$0")/../.."
list=${MUTANTS_LIST:-tests/mutants/list}
tree=${BUILD:-build}/mutants/tree
log=${BUILD:-build}/mutants/log
rm -rf "$tree" && mkdir -p "$tree" "$log"
cp -r Makefile src tests lessons tools docs .ci README.md "$tree"/
rm -rf "$tree/tests/mutants"
binaries=$(cd "$tree" && ls tests/test_*.c | sed 's|tests/\(.*\)\.c|build/tests/\1|')
build() { make -s -C "$tree" -j2 BUILD=build all $binaries; }
echo "building the unmutated tree"
build >"$log/build.txt" 2>&1 || { echo "the unmutated tree does not build:"; cat "$log/build.txt"; exit 1; }

# run_suites NAME SUITES...: 0 when every suite passes (the mutant survived)
run_suites() {
    local name=$1 suite status=0; shift
    if [ "${MUTANTS_FULL:-0}" = 1 ]; then
        make -C "$tree" BUILD=build test >"$log/$name.txt" 2>&1
        return
    fi
    : >"$log/$name.txt"
    for suite in "$@"; do
        case $suite in
            test_*) (cd "$tree" && "build/tests/$suite") >>"$log/$name.txt" 2>&1 ;;
            check_*) (cd "$tree" && bash "tests/$suite.sh") >>"$log/$name.txt" 2>&1 ;;
            *) echo "unknown suite $suite" >>"$log/$name.txt"; return 2 ;;
        esac || { status=1; echo "$suite" >"$log/$name.caught-by"; break; }
    done
    return $status
}

caught=0 total=0 invalid=0 survivors=""
# try_mutant: applies, builds, tests and reverts the mutant in name, file, edit, suites
try_mutant() {
    case " ${MUTANTS:-$name} " in *" $name "*) ;; *) return ;; esac
    total=$((total + 1))
    local target=$tree/$file saved=$log/original
    rm -f "$log/$name.caught-by"
    cp "$target" "$saved"
    sed -i -e "$edit" "$target"
    if cmp -s "$target" "$saved"; then
        echo "INVALID $name: the edit does not change $file"; invalid=$((invalid + 1))
    elif ! build >"$log/$name.build.txt" 2>&1; then
        echo "INVALID $name: does not build (see $log/$name.build.txt)"; invalid=$((invalid + 1))
    elif run_suites "$name" $suites; then
        echo "SURVIVED $name: $breaks"; survivors="$survivors $name"
    else
        echo "caught   $name${MUTANTS_FULL:+ (make test)} by $(cat "$log/$name.caught-by" 2>/dev/null || echo 'make test')"
        caught=$((caught + 1))
    fi
    cp "$saved" "$target"   # reverted (a newer time, so make rebuilds it)
}

name="" file="" edit="" suites="" breaks=""
while IFS= read -r line || [ -n "$line" ]; do
    case $line in
        "#"*) continue ;;
        name:*) name=${line#name: } ;;
        file:*) file=${line#file: } ;;
        sed:*) edit=${line#sed: } ;;
        suites:*) suites=${line#suites: } ;;
        breaks:*) breaks=${line#breaks: } ;;
        "") [ -n "$name" ] && try_mutant; name="" ;;
        *) echo "$list: cannot read the line: $line"; exit 1 ;;
    esac
done <"$list"
[ -n "$name" ] && try_mutant
summary="mutants: caught $caught of $total"
[ "$invalid" -eq 0 ] || summary="$summary, $invalid invalid"
[ -z "$survivors" ] || summary="$summary; survived:$survivors"
echo "$summary"
[ "$caught" -eq "$total" ] && [ "$total" -gt 0 ]
