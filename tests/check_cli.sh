#!/usr/bin/env bash
# The command line: options, exit statuses, --explain, --json's shape, locale independence.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
lesson=tests/reference/cat_sat.yaml
failures=0
output_is() {  # output_is [-s STATUS] EXPECTED COMMAND...: COMMAND's stdout and stderr are
    local status=0  # EXPECTED and it exits with STATUS (0 unless given)
    if [ "$1" = -s ]; then status=$2; shift 2; fi
    local want=$1; shift
    local got; got=$("$@" 2>&1)
    local code=$?
    [ "$got" = "$want" ] || { printf 'expected: %s\n     got: %s\n' "$want" "$got"; return 1; }
    [ "$code" -eq "$status" ] || { echo "exit status $code, expected $status: $*"; return 1; }
}
prints() {  # prints GREP_ARGS... -- COMMAND...: COMMAND exits 0 and its stdout matches grep
    local pattern=() out
    while [ "$1" != -- ]; do pattern+=("$1"); shift; done; shift
    out=$("$@") || { echo "exit status $?: $*"; return 1; }
    grep -q "${pattern[@]}" <<<"$out" || { echo "no line matches ${pattern[*]}: $*"; return 1; }
}
same_output() {  # same_output COMMAND... -- COMMAND...: both exit 0 with the same stdout
    local first=() a b
    while [ "$1" != -- ]; do first+=("$1"); shift; done; shift
    a=$("${first[@]}") || { echo "exit status $?: ${first[*]}"; return 1; }
    b=$("$@") || { echo "exit status $?: $*"; return 1; }
    [ "$a" = "$b" ] || { echo "outputs differ: ${first[*]} / $*"; return 1; }
}

check "--help exits 0 with usage" prints "^Usage: attnstep" -- ./attnstep --help
check "--help-keys lists the key table" prints "^  Tab  *next head$" -- ./attnstep --help-keys
keys_under() {  # keys_under HEADING KEYS: --help-keys exits 0 and lists KEYS in HEADING's section
    local out; out=$(./attnstep --help-keys) || { echo "exit status $?: --help-keys"; return 1; }
    awk -v h="$1" -v k="  $2 " 'index($0, h) == 1 { on = 1; next } /^[^ ]/ { on = 0 }
        on && index($0, k) == 1 { found = 1 } END { exit !found }' <<<"$out" \
        || { echo "--help-keys does not list $2 under $1"; return 1; }
}
check "--help-keys: q works everywhere" keys_under Everywhere "q Q"
check "--help-keys: ? works everywhere" keys_under Everywhere "? F1"
check "--help-keys: Ctrl-L works everywhere" keys_under Everywhere "Ctrl-L"
check "--help-keys: g while a question waits" keys_under "While a question waits" "g Home"
check "--help-keys: G while a question waits" keys_under "While a question waits" "G End"
check "--help-keys lists Ctrl-L once" output_is 1 bash -c "./attnstep --help-keys | grep -c '^  Ctrl-L '"
check "--version" output_is "attnstep 0.1.0" ./attnstep --version
check "unknown option exits 64" expect_status 64 ./attnstep --frobnicate "$lesson"
check "no lesson and no terminal exits 64" expect_status 64 ./attnstep </dev/null
check "two modes exit 64" expect_status 64 ./attnstep --plain --json "$lesson"
check "bad precision exits 64" expect_status 64 ./attnstep --precision 40 --plain "$lesson"
check "missing file exits 66" expect_status 66 ./attnstep --plain tests/no-such-lesson.yaml
check "missing file message" output_is \
    -s 66 "tests/no-such-lesson.yaml: error: cannot read: No such file or directory" \
    ./attnstep --plain tests/no-such-lesson.yaml
check "--check of good lessons is silent and exits 0" expect_status 0 bash -c \
    "out=\$(./attnstep --check $lesson tests/reference/*.yaml 2>&1); s=\$?; [ -z \"\$out\" ] || echo \"\$out\"; exit \$s"
check "--explain scores[cat,sat]" output_is \
    "scores[cat,sat] = q_cat · k_sat = (1.0 × 0.0) + (0.5 × 1.0) = 0.5" \
    ./attnstep --explain 'scores[cat,sat]' "$lesson"
check "--explain weights[cat,cat]" output_is \
    "weights[cat,cat] = exp(0.8839 − 0.8839) / (exp(0.8839 − 0.8839) [cat] + exp(0.3536 − 0.8839) [sat]) = 0.6296" \
    ./attnstep --explain 'weights[cat,cat]' "$lesson"
check "--explain by index, 3 decimals" output_is \
    "output[cat,1] = concat_cat · W_O[:,1] = (0.63 × 0.0) + (0.685 × 1.0) = 0.685" \
    ./attnstep --explain 'output[0,1]' --precision 3 "$lesson"
check "--explain of an unknown cell exits 64" expect_status 64 ./attnstep --explain 'weights[dog,cat]' "$lesson"
check "--explain of a mistyped token says which it means" output_is -s 64 \
    "attnstep: no such cell 'weights[cat,sta]': 'sta' is not a column of weights; did you mean 'sat'?
Try 'attnstep --help' for more information." ./attnstep --explain 'weights[cat,sta]' "$lesson"
# a repeated token is named by its position; its plain name could be either, and is refused
check "--explain Q_rotated[dog@6,1] gives the dog at position 6" output_is \
    "Q_rotated[dog@6,1] = Q[dog@6,0]·sin θ + Q[dog@6,1]·cos θ, θ = 6 × 10000.0^(−0/4) = 6.0 (pair 0 of head 1) = (1.0 × -0.2794) + (0.0 × 0.9602) = -0.2794" \
    ./attnstep --explain 'Q_rotated[dog@6,1]' lessons/rope.yaml
check "--explain of a repeated token's plain name lists its positions" output_is -s 64 \
    "attnstep: cell 'Q_rotated[dog,1]' is ambiguous: 'dog' appears at positions 2 and 6: write dog@2 or dog@6
Try 'attnstep --help' for more information." ./attnstep --explain 'Q_rotated[dog,1]' lessons/rope.yaml
printf 'q\n' > "$tmp/quit.keys"
check "--at of a mistyped stage says which it means" output_is -s 64 \
    "attnstep: --at 'wieghts[cat,sat]': unknown stage 'wieghts'; did you mean 'weights'? (stages: input Q K V scores scaled masked weights context concat output)" \
    ./attnstep --at 'wieghts[cat,sat]' --keys "$tmp/quit.keys" "$lesson"
check "--explain of a head that does not exist exits 64" \
    expect_status 64 ./attnstep --explain 'weights[cat,cat]' --head 2 "$lesson"
check "--plain shows cat's weights" prints '^cat  0.6296  0.3704$' -- ./attnstep --plain "$lesson"
check "piped output without a mode is the plain trace" \
    same_output ./attnstep "$lesson" -- ./attnstep --plain "$lesson"
check "--json parses and has every stage" /usr/bin/python3 -c '
import json, subprocess, sys
doc = json.loads(subprocess.run(["./attnstep", "--json", sys.argv[1]], capture_output=True, check=True).stdout)
names = [s["name"] for s in doc["stages"]]
assert names == ["input", "Q", "K", "V", "scores", "scaled", "masked", "weights", "context", "concat", "output"], names
assert doc["tokens"] == ["cat", "sat"] and doc["d_model"] == 2 and doc["heads"] == 1 and doc["d_k"] == 2
w = doc["stages"][7]
assert w["head"] == 1 and w["rows"] == ["cat", "sat"] and w["cols"] == ["cat", "sat"]
assert doc["stages"][0]["head"] is None and doc["stages"][0]["cols"] == ["0", "1"]
assert "source" not in doc
assert abs(w["values"][0][0] - 0.62963) < 1e-4
' "$lesson"
check "--json hidden cells of masked are null" /usr/bin/python3 -c '
import json, subprocess
doc = json.loads(subprocess.run(["./attnstep", "--json", "tests/reference/causal_two_heads.yaml"], capture_output=True, check=True).stdout)
masked = [s for s in doc["stages"] if s["name"] == "masked"]
assert len(masked) == 2 and masked[1]["head"] == 2
assert masked[0]["values"][0][1] is None and masked[0]["values"][1][0] is not None
'
check "--json cross-attention has source and source_input" /usr/bin/python3 -c '
import json, subprocess
doc = json.loads(subprocess.run(["./attnstep", "--json", "tests/reference/cross_two_heads.yaml"], capture_output=True, check=True).stdout)
assert doc["source"] == ["the", "black", "cat", "sat"]
first = doc["stages"][0]
assert first["name"] == "source_input" and first["rows"] == doc["source"]
k = [s for s in doc["stages"] if s["name"] == "K"][0]
assert k["rows"] == doc["source"]
w = [s for s in doc["stages"] if s["name"] == "weights"][0]
assert w["rows"] == ["le", "chat", "noir"] and w["cols"] == doc["source"]
c = [s for s in doc["stages"] if s["name"] == "context"][0]
assert c["cols"] == ["0", "1"]
'
check "--csv weights reads back to the exact softmax" /usr/bin/python3 -c '
import csv, io, math, subprocess, sys
text = subprocess.run(["./attnstep", "--csv", "weights", sys.argv[1]], capture_output=True, check=True).stdout.decode()
rows = list(csv.reader(io.StringIO(text, newline="")))
assert text.endswith("\r\n") and rows[0] == ["weights", "cat", "sat"], rows
def softmax(xs):
    top = max(xs); e = [math.exp(x - top) for x in xs]; return [v / sum(e) for v in e]
want = {"cat": softmax([1.25 / math.sqrt(2), 0.5 / math.sqrt(2)]), "sat": softmax([0.5 / math.sqrt(2), 1 / math.sqrt(2)])}
for row in rows[1:]:
    assert [float(x) for x in row[1:]] == want[row[0]], (row, want[row[0]])
' "$lesson"
check "--csv of an unknown stage exits 64" expect_status 64 ./attnstep --csv weight "$lesson"
check "--csv of a misspelt stage offers the stage table's nearest name" output_is -s 64 \
    "attnstep: --csv: unknown stage 'weigths'; did you mean 'weights'? (stages: input Q K V scores scaled masked weights context concat output)
Try 'attnstep --help' for more information." ./attnstep --csv weigths "$lesson"
check "--check notes a CSV file's header, and passes (--strict too)" output_is \
    "tests/cli/csv_header.yaml:5:20: note: embeddings 'csv_header.csv': line 1 (x,y) is read as a header, not as a row of numbers, because every field in it is text
    5 | embeddings: {file: csv_header.csv}
      |                    ^
hint: if line 1 is meant as a row of numbers, correct it; a header is not read as numbers" \
    ./attnstep --check --strict tests/cli/csv_header.yaml
check "--plain says nothing of a CSV file's header" \
    bash -c '[ -z "$(./attnstep --plain tests/cli/csv_header.yaml 2>&1 >/dev/null)" ]'
check "--markdown has a table" prints '^| cat | 0.6296 | 0.3704 |$' -- ./attnstep --markdown "$lesson"
check "--markdown has a title" prints '^# cat sat, hand-worked$' -- ./attnstep --markdown "$lesson"
check "--template is a lesson that passes --check" bash -c "./attnstep --template >$tmp/template.yaml && ./attnstep --check $tmp/template.yaml"
# Every key of lessons/README.md's key tables (the lesson's and a step's) is in the template,
# written or commented out, so a new author sees it.
documented_keys() {
    awk '/^\| key \| required \|/ { keys = 1; next } keys && !/^\|/ { keys = 0 }
         keys { split($0, cols, "|"); s = cols[2]
                while (match(s, /`[^`]+`/)) { print substr(s, RSTART + 1, RLENGTH - 2)
                                              s = substr(s, RSTART + RLENGTH) } }' lessons/README.md
}
template_lacks() {
    local key missing=""
    ./attnstep --template >"$tmp/template.yaml" || return 1
    [ "$(documented_keys | wc -l)" -ge 30 ] || { echo "the key tables were not found"; return 1; }
    for key in $(documented_keys); do
        grep -Eq "^[# ]*(- )?$key:" "$tmp/template.yaml" || missing="$missing $key"
    done
    [ -z "$missing" ] || { echo "--template lacks:$missing"; return 1; }
}
check "--template shows every key lessons/README.md documents" template_lacks
check "overflow is an error naming the stage and cell" output_is -s 65 \
    "tests/cli/overflow.yaml: error: a number grew too large to represent (overflow) in scores[a,a] of head 1" \
    ./attnstep --json tests/cli/overflow.yaml
check "overflow exits 65 with no output" bash -c "out=\$(./attnstep --plain tests/cli/overflow.yaml 2>/dev/null); [ \$? -eq 65 ] && [ -z \"\$out\" ]"
check "--check computes the trace: overflow exits 65 naming the cell" output_is -s 65 \
    "tests/cli/overflow.yaml: error: a number grew too large to represent (overflow) in scores[a,a] of head 1" \
    ./attnstep --check tests/cli/overflow.yaml
check "--check of an overflowing lesson exits 65" expect_status 65 ./attnstep --check tests/cli/overflow.yaml
check "--check warns of a question answered before it is asked, and exits 0" output_is \
    "tests/cli/question_answered.yaml:19:5: warning: the answer to this question is already on screen: the about text (line 6) writes weights[cat,sat]@2; tell it after the question, in its step's say
   19 |     ask: In head 2, which word does cat look at most?
      |     ^
tests/cli/question_answered.yaml:25:5: warning: the answer to this question is already on screen: step 1 (line 14) shows weights of head 1; ask it at or before the first step that shows it
   25 |     ask: In head 1, how much does cat give to itself?
      |     ^
tests/cli/question_answered.yaml:29:13: warning: answer 1 cannot be checked: the step has no focus (or write 'answer: auto' with a focus)
   29 |     answer: 1
      |             ^" \
    ./attnstep --check tests/cli/question_answered.yaml
check "--check with warnings only exits 0" expect_status 0 ./attnstep --check tests/cli/question_answered.yaml
check "--check warns of an automatic choice that is not its row's largest, and exits 0" output_is \
    "tests/cli/auto_not_largest.yaml:21:13: warning: 'answer: auto' takes 'sat', the column of the focus weights[cat,sat], but the largest value of that row is at 'cat'; if the question asks which is largest, put the focus there
   21 |     answer: auto
      |             ^" \
    ./attnstep --check tests/cli/auto_not_largest.yaml
check "the warning names a repeated token's column as the explanation does (the@0)" output_is \
    "tests/cli/auto_not_largest_repeated.yaml:14:13: warning: 'answer: auto' takes 'cat', the column of the focus weights[cat,cat], but the largest value of that row is at 'the@0'; if the question asks which is largest, put the focus there
   14 |     answer: auto
      |             ^" \
    ./attnstep --check tests/cli/auto_not_largest_repeated.yaml
check "--plain shows no warning" output_is "" bash -c "./attnstep --plain tests/cli/question_answered.yaml >/dev/null"
check "--check proves every shipped lesson, silently" output_is "" ./attnstep --check lessons/*.yaml
check "--plain writes live numbers into the narration" bash -c \
    "./attnstep --plain tests/cli/live_numbers.yaml | grep -qxF '  | cat gives 0.391 to sat (0.39), most to sat; {Braces} stay.'"
check "a false claim stops --plain too, with exit 65 and nothing on stdout" bash -c \
    "out=\$(./attnstep --plain tests/bad/claim_false.yaml 2>/dev/null); [ \$? -eq 65 ] && [ -z \"\$out\" ]"
check "TERM=dumb on a terminal prints the plain trace with a note" bash -c \
    "out=\$(TERM=dumb script -qec './attnstep $lesson' /dev/null </dev/null) &&
     grep -qF '(TERM is unset or dumb); printing the plain trace' <<<\"\$out\" && grep -q '^cat  0.6296  0.3704.$' <<<\"\$out\""
check "--stats lists every stage with its counts" bash -c "./attnstep --stats $lesson >$tmp/stats && grep -q '^scores  *2×2  *8  *4 ' $tmp/stats && [ \$(grep -cE '^(input|Q|K|V|scores|scaled|masked|weights|context|concat|output) ' $tmp/stats) -eq 11 ] && grep -q '^total ' $tmp/stats && grep -q 'Peak memory' $tmp/stats"
# counts of four digits and more grouped by three, worked out by hand for n = 8, d_model = 16:
# a projection multiplies 8·16·16 = 2,048 times and adds 8·16·15 = 1,920 times; in all
# 4 projections + scores (8·8·16) + context (8·16·8) = 10,240 multiplications
printf 'title: counts\ntokens: a b c d e f g h\nd_model: 16\nembeddings: {random: normal, seed: 1}\n' \
    >"$tmp/counts.yaml"
check "--stats groups its counts' digits by three" bash -c "./attnstep --stats $tmp/counts.yaml >$tmp/stats && grep -q '^Q  *8×16  *2,048  *1,920 ' $tmp/stats && grep -q '^total  *10,240 ' $tmp/stats"
check "--cost shows the n² work quadrupling" bash -c "./attnstep --cost --d-model 16 --heads 2 >$tmp/cost && grep -q '^  2048 ' $tmp/cost && [ \$(grep -c '×4.00' $tmp/cost) -ge 7 ]"
check "--cost refuses heads that do not divide d_model" expect_status 64 ./attnstep --cost --d-model 10 --heads 4
# the suites run with ATTNSTEP_TIMING_MS=0 (tests/run.sh); the default, and a value given, as said
check "ATTNSTEP_TIMING_MS unset: --stats measures each time for 50 ms at least" bash -c \
    "env -u ATTNSTEP_TIMING_MS ./attnstep --stats $lesson | grep -q 'repeated for at least 50 ms\.\$'"
check "ATTNSTEP_TIMING_MS=7: --cost --decode measures each time for 7 ms at least" bash -c \
    "ATTNSTEP_TIMING_MS=7 ./attnstep --cost --decode --d-model 8 --heads 2 | grep -q '^repeated for at least 7 ms\.\$'"
check "ATTNSTEP_TIMING_MS that is not a number is said (and 50 ms used)" bash -c \
    "ATTNSTEP_TIMING_MS=5x ./attnstep --cost --d-model 10 --heads 4 2>&1 >/dev/null | head -n 1 |
     grep -qx 'attnstep: ATTNSTEP_TIMING_MS=5x is not a number of milliseconds from 0 to 60000; using 50'"
narration=tests/reference/narration_text.yaml
check "--plain keeps a literal block's lines" bash -c "./attnstep --plain $narration >$tmp/lit && grep -A3 '^  | first line$' $tmp/lit | cmp -s - <(printf '  | first line\n  | second line\n  |\n  | new paragraph\n')"
for mode in --plain --markdown --json; do
    check "$mode exits 0 and never prints a raw control character" bash -c \
        "./attnstep $mode $narration >$tmp/ctl && [ -s $tmp/ctl ] && ! LC_ALL=C grep -q \$'[\x01-\x08\x0b-\x1f\x7f]\\|\xe2\x80\xae' $tmp/ctl"
done
check "--plain shows control characters escaped" prints 'narration \\x1b\[31mtext' -- ./attnstep --plain "$narration"
check "--plain shows a bidi override escaped" prints -F 'bidi \u202e override and bell \x07' -- ./attnstep --plain "$narration"
# Numbers read and print with '.' whatever the user's locale (de_DE writes 0,5).
if locale -a 2>/dev/null | grep -qi '^de_DE.utf-\?8$'; then
    check "--json is the same under a German locale" \
        same_output env LC_ALL=de_DE.UTF-8 ./attnstep --json "$lesson" -- env LC_ALL=C ./attnstep --json "$lesson"
    check "--plain is the same under a German locale" \
        same_output env LC_ALL=de_DE.UTF-8 ./attnstep --plain "$lesson" -- env LC_ALL=C.UTF-8 ./attnstep --plain "$lesson"
else
    echo "FAIL the de_DE.UTF-8 locale is missing (.ci/install-deps generates it)"; failures=$((failures + 1))
fi
check "write error exits 74" expect_status 74 bash -c "./attnstep --json $lesson >/dev/full"
check "ATTNSTEP_THREADS that is not a number is said, and the trace is computed" bash -c \
    'out=$(ATTNSTEP_THREADS=many ./attnstep --json '"$lesson"' 2>&1 >/dev/null) &&
     [ "$out" = "attnstep: ATTNSTEP_THREADS=many is not a number; using every core" ]'
# The 1024-token lesson is large enough for the kernels to share its products among threads.
check "ATTNSTEP_THREADS=1 changes no bit of a trace computed with every core" same_output \
    ./attnstep --csv output tests/bench/long_1024.yaml -- \
    env ATTNSTEP_THREADS=1 ./attnstep --csv output tests/bench/long_1024.yaml
check "ATTNSTEP_PORTABLE=1 (no vector code) changes no bit of the weights" same_output \
    ./attnstep --csv weights tests/bench/long_1024.yaml -- \
    env ATTNSTEP_PORTABLE=1 ./attnstep --csv weights tests/bench/long_1024.yaml

# --precision N: N decimals in every number of --plain's and --markdown's tables and in
# --explain; --json and --csv always write every digit, whatever --precision says.
check "--plain --precision 2" prints '^cat  0.63  0.37$' -- ./attnstep --plain --precision 2 "$lesson"
check "--plain --precision 6" prints '^cat  0.629560  0.370440$' -- ./attnstep --plain --precision 6 "$lesson"
check "--markdown --precision 2" prints '^| cat | 0.63 | 0.37 |$' -- ./attnstep --markdown --precision 2 "$lesson"
check "--markdown --precision 6" prints '^| cat | 0.629560 | 0.370440 |$' -- ./attnstep --markdown --precision 6 "$lesson"
check "--explain --precision 6" output_is \
    "weights[cat,cat] = exp(0.883883 − 0.883883) / (exp(0.883883 − 0.883883) [cat] + exp(0.353553 − 0.883883) [sat]) = 0.62956" \
    ./attnstep --explain "weights[cat,cat]" --precision 6 "$lesson"
check "--json refuses --precision, which it would ignore" output_is -s 64 \
    "attnstep: --precision does nothing with --json
Try 'attnstep --help' for more information." ./attnstep --json --precision 1 "$lesson"
check "--json writes weights[cat,cat] to every digit" prints -F '[[0.62956009596964146, 0.37043990403035854]' -- ./attnstep --json "$lesson"
check "--csv --precision 1 writes one decimal" prints '^cat,0.6,0.4.\?$' -- \
    ./attnstep --csv weights --precision 1 "$lesson"
check "--csv without --precision writes every digit" prints -F 'cat,0.62956009596964146,0.37043990403035854' -- \
    ./attnstep --csv weights "$lesson"
# --csv of every stage and head (--head) of a multi-head and a cross-attention lesson: as many
# rows and columns as --json says, each number the same double.
for multi in lessons/four_heads.yaml tests/reference/cross_two_heads.yaml; do
    check "--csv of every stage and head of $multi equals --json" /usr/bin/python3 -c '
import csv, json, subprocess, sys
path = sys.argv[1]
doc = json.loads(subprocess.run(["./attnstep", "--json", path], capture_output=True, check=True).stdout)
assert doc["heads"] > 1
for s in doc["stages"]:
    args = ["./attnstep", "--csv", s["name"]] + (["--head", str(s["head"])] if s["head"] else []) + [path]
    run = subprocess.run(args, capture_output=True, text=True)
    assert run.returncode == 0, (args, run.returncode, run.stderr)
    rows = list(csv.reader(run.stdout.splitlines()))
    assert len(rows) == len(s["rows"]) + 1, (args, len(rows), len(s["rows"]))
    assert rows[0] == [s["name"]] + s["cols"], (args, rows[0])
    for label, row, want in zip(s["rows"], rows[1:], s["values"]):
        got = [float(x) for x in row[1:]]
        want = [float("-inf") if x is None else x for x in want]
        assert row[0] == label and got == want, (args, label, row, want)
' "$multi"
done
# Every --markdown table has the rows and columns its heading says (R×C): R rows under the two
# header lines, C numbers in each; the headings of the heads of a per-head stage all have one.
for multi in lessons/four_heads.yaml tests/reference/cross_two_heads.yaml; do
    check "--markdown tables of $multi have the rows and columns their headings say" /usr/bin/python3 -c '
import re, subprocess, sys
run = subprocess.run(["./attnstep", "--markdown", sys.argv[1]], capture_output=True, text=True)
assert run.returncode == 0, run.stderr
headings, tables, heads = 0, 0, set()
lines = run.stdout.splitlines() + ["## end"]
for i, line in enumerate(lines):
    m = re.match(r"^## \d+\. .*?(?: \(head (\d+)\))? — (\d+)×(\d+)$", line)
    if not m:
        continue
    headings += 1
    heads.add(m.group(1))
    rows, cols = int(m.group(2)), int(m.group(3))
    block = []
    for after in lines[i + 1:]:
        if after.startswith("## "):
            break
        if after.startswith("|"):
            block.append(after)
    if block:
        tables += 1
        assert len(block) == rows + 2, (line, len(block))
        assert all(row.count(" | ") == cols for row in block[2:]), line
assert headings >= 8 and tables >= 8 and len(heads - {None}) >= 2, (headings, tables, heads)
' "$multi"
done
check "--csv --head beyond the lesson's heads exits 64" \
    expect_status 64 ./attnstep --csv weights --head 5 lessons/four_heads.yaml

# --check over several lessons: every problem is printed; 66 (a lesson it cannot read) wins over
# 65 (a lesson with errors), in either order; 65 alone when every file was read.
bad=tests/bad/anchors_aliases.yaml
check "--check: a bad lesson then a missing one exits 66" \
    expect_status 66 ./attnstep --check "$bad" tests/no-such-lesson.yaml
check "--check: a missing lesson then a bad one exits 66" \
    expect_status 66 ./attnstep --check tests/no-such-lesson.yaml "$bad" "$lesson"
check "--check: a good lesson and a bad one exits 65" expect_status 65 ./attnstep --check "$lesson" "$bad"
check "--check names every lesson's problem" bash -c \
    "./attnstep --check $bad tests/no-such-lesson.yaml 2>$tmp/both; [ \$? -eq 66 ] &&
     grep -q '^$bad:1:8: error: YAML anchors' $tmp/both && grep -q '^tests/no-such-lesson.yaml: error: cannot read' $tmp/both"

# --compare: two lessons, and a terminal (it has no text form)
check "--compare with one lesson exits 64" expect_status 64 ./attnstep --compare "$lesson"
check "--compare with three lessons exits 64" expect_status 64 ./attnstep --compare "$lesson" "$lesson" "$lesson"
check "--compare without a terminal exits 64 and says why" bash -c \
    "TERM=dumb ./attnstep --compare $lesson $lesson </dev/null >$tmp/out 2>$tmp/err; [ \$? -eq 64 ] &&
     [ ! -s $tmp/out ] && grep -q 'needs a terminal' $tmp/err"

# --train-step: with --compare, in the lesson's range (issue 27)
trains=lessons/learn_bank_river.yaml
: > "$tmp/none.keys"
check "--train-step past the lesson's steps exits 64 and says its range" bash -c \
    "./attnstep --compare $trains --train-step 41 --keys $tmp/none.keys >$tmp/out 2>$tmp/err; [ \$? -eq 64 ] &&
     [ ! -s $tmp/out ] && grep -q 'trains for 40 steps (0 to 40)' $tmp/err"
check "--train-step without --compare exits 64 and says so" bash -c \
    "./attnstep $trains --train-step 3 --keys $tmp/none.keys >$tmp/out 2>$tmp/err; [ \$? -eq 64 ] &&
     grep -q 'goes with --compare' $tmp/err"
check "--train-step takes a whole number" expect_status 64 ./attnstep --compare "$trains" --train-step -1 --keys $tmp/none.keys
check "--train-step 0 compares a lesson with itself" bash -c \
    "./attnstep --compare $trains --train-step 0 --keys $tmp/none.keys >$tmp/out 2>&1 &&
     grep -q 'A · Where W_Q' $tmp/out && ! grep -q trained $tmp/out"

echo "cli: $failures failed"
[ "$failures" -eq 0 ]
