#!/usr/bin/env bash
# The Markdown handouts as a reader sees them, rendered by pandoc (a test dependency: without it
# this suite fails, it never skips): lesson text that looks like Markdown or HTML renders as
# written, and a worksheet (--markdown --worksheet) shows no answer before its answer key.
set -u
cd "$(dirname "$0")/.."
binary=./attnstep
failed=0
fail() { echo "FAIL: $*"; failed=1; }
[ -x "$binary" ] || { echo "check_markdown: $binary is not built"; exit 1; }
command -v pandoc >/dev/null \
    || { echo "check_markdown: pandoc is missing (bash .ci/install-deps test)"; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Runs attnstep with its arguments into $scratch/out, and fails unless it exits with want.
run() {
    local want=$1; shift
    "$binary" "$@" >"$scratch/out" 2>"$scratch/err"
    local status=$?
    [ "$status" -eq "$want" ] \
        || fail "attnstep $* exited $status, not $want: $(head -c 300 "$scratch/err")"
}

# ---- lesson text that Markdown or HTML would read as syntax renders as written ----
cat >"$scratch/syntax.yaml" <<'EOF'
title: "# not a heading <script>alert(1)</script> [x](javascript:alert(1))"
about: "<b>bold?</b> *a* _b_ `c` 1. not a list & more"
tokens: ["<s>", "<eos>", "*a*", "`x`", "a|b", "[x](javascript:y)"]
embeddings:
  "<s>": [1.0, 0.0]
  "<eos>": [0.0, 1.0]
  "*a*": [1.0, 1.0]
  "`x`": [0.5, 0.0]
  "a|b": [0.0, 0.5]
  "[x](javascript:y)": [0.25, 0.25]
steps:
  - stage: weights
    say: "Here <eos> looks at *a* | `x`; # not a heading"
    focus: ["<s>", "`x`"]
EOF
run 0 --markdown "$scratch/syntax.yaml"
pandoc -f markdown -t plain --wrap=none "$scratch/out" >"$scratch/plain" 2>"$scratch/pandoc_err" \
    || fail "pandoc could not read the handout: $(cat "$scratch/pandoc_err")"
for token in '<s>' '<eos>' '*a*' '`x`' 'a|b' '[x](javascript:y)'; do
    # every token in the header row of the weights table and in the token line
    count=$(grep -cF -- "$token" "$scratch/plain")
    [ "$count" -ge 2 ] || fail "token '$token' does not render as written (found on $count lines)"
done
grep -qF '# not a heading <script>alert(1)</script> [x](javascript:alert(1))' "$scratch/plain" \
    || fail "the title does not render as written"
grep -qF '<b>bold?</b> *a* _b_ `c` 1. not a list & more' "$scratch/plain" \
    || fail "the about does not render as written"
grep -qF 'Here <eos> looks at *a* | `x`; # not a heading' "$scratch/plain" \
    || fail "the narration does not render as written"
# as HTML: no element and no link comes from the lesson, only text
pandoc -f markdown -t html "$scratch/out" >"$scratch/html" || fail "pandoc could not write HTML"
grep -qiE '<(script|b|s|eos|em|a)[ >]' "$scratch/html" \
    && fail "lesson text became HTML: $(grep -oiE '<(script|b|s|eos|em|a)[ >][^<]*' "$scratch/html")"
grep -q '^<h1' "$scratch/html" && [ "$(grep -c '<h1' "$scratch/html")" -eq 1 ] \
    || fail "the handout should have exactly one top heading (the title)"
# the table keeps its columns: the header row has every token as its own cell
[ "$(grep -c '<th' "$scratch/html")" -ge 7 ] || fail "a '|' in a token broke the table's columns"

# ---- worksheets: nothing before a question gives its answer away (tests/worksheet_answers.py) ----
worksheets=0
# pandoc takes seconds over a table of 512 columns (the d_model 512 lessons have three or four),
# so a table row of more than 64 cells is cut to its label and first 64 before it reads it:
# the rows stay, and no question of those lessons is about a stage that wide.
narrow() { awk -F'|' '/^\|/ && NF > 67 { line = ""; for (i = 1; i <= 66; i++) line = line $i "|"
                                          print line; next } { print }' "$1" >"$1.narrow"
           mv "$1.narrow" "$1"; }
for lesson in lessons/*.yaml; do
    name=$(basename "$lesson" .yaml)
    run 0 --markdown --worksheet "$lesson"
    narrow "$scratch/out"
    pandoc -f markdown -t plain --wrap=none "$scratch/out" >"$scratch/$name.txt" \
        || { fail "$name: pandoc could not read the worksheet"; continue; }
    python3 tests/worksheet_answers.py "$name" "$scratch/$name.txt" \
        || fail "$name: the worksheet gives answers away"
    worksheets=$((worksheets + 1))
done
[ "$worksheets" -ge 11 ] || fail "only $worksheets worksheets checked"
# every lesson of the teaching order is among them (a lesson ORDER names that is not there
# would go unchecked)
while read -r ordered; do
    [ -f "$scratch/${ordered%.yaml}.txt" ] || fail "lessons/ORDER names $ordered, whose worksheet was not checked"
done < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' lessons/ORDER)
# the plain handout, by contrast, answers in place: the same check sees that
run 0 --markdown lessons/cat_sat.yaml
pandoc -f markdown -t plain --wrap=none "$scratch/out" >"$scratch/handout.txt"
python3 tests/worksheet_answers.py handout "$scratch/handout.txt" >/dev/null \
    && fail "the worksheet check does not see the answers of the plain handout"

# A weights question is answered by the scores and scaled tables too (softmax keeps each row's
# order, and its numbers follow from them): the worksheet withholds those stages' tables, not
# only the asked stage's (the number check above cannot see it: they hold other numbers).
cat >"$scratch/family.yaml" <<'EOF'
title: worksheet families
tokens: [cat, sat]
embeddings:
  cat: [1.0, 0.5]
  sat: [0.0, 1.0]
steps:
  - stage: scores
    say: The scores.
  - stage: scaled
    say: Scaled.
  - stage: weights
    focus: [cat, cat]
    ask: Which word does cat look at most?
    choices: [cat, sat]
    answer: auto
EOF
run 0 --markdown --worksheet "$scratch/family.yaml"
sed -n '/^## 1\. scores/,/^## 3\./p' "$scratch/out" >"$scratch/before"
[ "$(grep -c '^\*Table withheld' "$scratch/before")" -eq 2 ] && ! grep -q '^| cat ' "$scratch/before" \
    || fail "the worksheet shows scores or scaled before a weights question: $(cat "$scratch/before")"

# --worksheet belongs to --markdown, --full to --explain
run 64 --worksheet --plain lessons/cat_sat.yaml
grep -q -- '--worksheet does nothing with --plain' "$scratch/err" \
    || fail "--worksheet --plain: no reason"
run 64 --full lessons/cat_sat.yaml
grep -q -- '--full does nothing with' "$scratch/err" || fail "--full without --explain: no reason"

# --explain names the term that makes the sum; --full writes all eight
run 0 --explain 'context[bank,0]' lessons/bank_loan.yaml
grep -qF '(0.7073 × 1.0) [river] + 4 more terms (the, gave, a, loan), each 0 = 0.7073' "$scratch/out" \
    || fail "--explain context[bank,0] hides river's term: $(cat "$scratch/out")"
run 0 --explain 'context[bank,0]' --full lessons/bank_loan.yaml
[ "$(grep -o '] + (' "$scratch/out" | wc -l)" -eq 7 ] \
    || fail "--full does not write 8 terms: $(cat "$scratch/out")"

echo "markdown: handouts rendered, $worksheets worksheets checked"
exit $failed
