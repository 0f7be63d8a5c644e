#!/usr/bin/env bash
# Questions never leak.
# 1. `attnstep --check --strict` passes on every shipped lesson: no question's answer is written
#    before it is asked (in the about text, an earlier step, the question itself, or the lesson
#    before it in lessons/ORDER), and no other warning.
# 2. Each kind of leak, planted in a scratch lesson, is warned of with the line it is on, and
#    --strict turns the warning into exit status 65.
# 3. In every shipped lesson (and the screen tests' question lesson), no open question's screen
#    marks, names or shows its answer (tests/check_questions.py says what is looked for).
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failed=0

if ! out=$(./attnstep --check --strict lessons/*.yaml 2>&1); then
    echo "FAIL --check --strict lessons/*.yaml:"; echo "$out"; failed=1
else
    echo "ok   --check --strict passes on every shipped lesson"
fi

# lesson NAME: writes $tmp/NAME.yaml from stdin after a shared head (two words, V the identity:
# cat gives 0.6296 of its attention to itself, and that is cat's output[0] too).
lesson() {
    { printf 'title: a planted leak\n'; cat; } >"$tmp/$1.yaml"
}
head_lines='tokens: [cat, sat]
embeddings:
  cat: [1.0, 0.5]
  sat: [0.0, 1.0]'
numeric_question='  - stage: weights
    focus: [cat, cat]
    ask: What share of its attention will cat give to itself? (two decimals)
    answer: 0.63
    tolerance: 0.01'

# planted NAME WHAT WHERE: --check warns of $tmp/NAME.yaml's question with WHERE (the text and
# the line the answer is on), exits 0, and --strict exits 65.
planted() {
    local name=$1 what=$2 where=$3 ok=1
    ./attnstep --check "$tmp/$name.yaml" >/dev/null 2>"$tmp/err" || ok=0
    grep -qF -- "$where" "$tmp/err" || ok=0
    ./attnstep --check --strict "$tmp/$name.yaml" >/dev/null 2>&1
    [ $? -eq 65 ] || ok=0
    if [ $ok -eq 1 ]; then
        echo "ok   a leak $what is warned of: $where"
    else
        echo "FAIL a leak $what: expected a warning with \"$where\" and --strict exit 65, got:"
        cat "$tmp/err"; failed=1
    fi
}

lesson about <<EOF
about: Follow cat to its output [0.6296, 0.6852].
$head_lines
steps:
$numeric_question
EOF
planted about "in the about text (the picker's summary)" "the about text (line 2) says '0.6296'"

lesson percent <<EOF
$head_lines
steps:
  - stage: scores
    say: >-
      Keep an eye on cat:
      it will keep 63% for itself.
$numeric_question
EOF
planted percent "as a percentage in an earlier step" "the narration of step 1 (line 10) says '63%'"

lesson question <<EOF
$head_lines
steps:
  - stage: weights
    focus: [cat, cat]
    ask: Last time cat kept 0.63 for itself. How much now?
    answer: auto
    tolerance: 0.01
EOF
planted question "in the question itself" "the question itself (line 9) says '0.63'"

lesson choice <<EOF
$head_lines
steps:
  - stage: input
    say: >-
      Two words. The word cat will look mostly at
      cat, as we shall see; sat is elsewhere.
  - stage: scores
    say: In the scores, sat looks at cat.
  - stage: weights
    focus: [sat, sat]
    ask: Which word will sat look at most?
    choices: [cat, sat]
    answer: auto
EOF
# "sat looks at cat" names another choice, not sat's answer (sat); and a row that is its own
# answer is named in every sentence about it, so no sentence is read as telling it
if ./attnstep --check --strict "$tmp/choice.yaml" 2>"$tmp/err"; then
    echo "ok   a sentence naming the row and another choice is no leak"
else
    echo "FAIL a sentence naming the row and another choice was taken for a leak:"
    cat "$tmp/err"; failed=1
fi

cat >"$tmp/choice_told.yaml" <<EOF
title: a planted leak
$head_lines
steps:
  - stage: input
    say: >-
      Two words. Whatever you guess, the
      word sat gets most of what cat looks at.
  - stage: scores
    focus: [cat, sat]
    ask: Which word will cat score highest against?
    choices: [cat, sat]
    answer: auto
EOF
planted choice_told "as the choice in a sentence naming the focus row" \
    "the narration of step 1 (line 10) says 'sat'"

mkdir -p "$tmp/order"
printf '# two lessons\nfirst.yaml\nsecond.yaml\n' >"$tmp/order/ORDER"
cat >"$tmp/order/first.yaml" <<EOF
title: the first lesson
$head_lines
steps:
  - stage: weights
    say: >-
      Remember this one:
      cat keeps 0.63 of its attention.
EOF
cat >"$tmp/order/second.yaml" <<EOF
title: the second lesson
$head_lines
steps:
$numeric_question
EOF
planted order/second "in the lesson before it in ORDER" \
    "step 1 of first.yaml, the lesson before (line 10) says '0.63'"
sed -i 's/0.63 of/most/' "$tmp/order/first.yaml"
if ./attnstep --check --strict "$tmp/order/second.yaml" 2>"$tmp/err"; then
    echo "ok   the lesson before that does not say it is no leak"
else
    echo "FAIL the lesson before was taken for a leak:"; cat "$tmp/err"; failed=1
fi

/usr/bin/python3 tests/check_questions.py ./attnstep lessons/*.yaml \
    tests/screens/extra/questions.yaml || failed=1
exit $failed
