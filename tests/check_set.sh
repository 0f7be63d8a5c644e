#!/usr/bin/env bash
# --set (issue 29): fifty edits against the lesson files edited by hand (check_set.py), the
# bad edits each refused with a message naming its part (exit 64), and --set in the UI and
# --compare with one lesson (a lesson against its edited self).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export XDG_STATE_HOME="$tmp/state"
failures=0
prints() {  # prints GREP_ARGS... -- COMMAND...: COMMAND exits 0 and its stdout matches grep
    local pattern=() out
    while [ "$1" != -- ]; do pattern+=("$1"); shift; done; shift
    out=$("$@") || { echo "exit status $?: $*"; return 1; }
    grep -q "${pattern[@]}" <<<"$out" || { echo "no line matches ${pattern[*]}: $*"; return 1; }
}
refused() {  # refused EDIT MESSAGE [LESSON]: --set EDIT exits 64 saying MESSAGE, nothing on stdout
    local edit=$1 want=$2 lesson=${3:-lessons/bank_river.yaml} out err code
    out=$(./attnstep --json --set "$edit" "$lesson" 2>"$tmp/err"); code=$?
    err=$(head -1 "$tmp/err")
    [ "$code" -eq 64 ] || { echo "exit status $code, expected 64: --set '$edit'"; return 1; }
    [ -z "$out" ] || { echo "--set '$edit' printed to stdout"; return 1; }
    [ "$err" = "attnstep: --set: '$edit': $want" ] \
        || { printf 'expected: %s\n     got: %s\n' "attnstep: --set: '$edit': $want" "$err"; return 1; }
}

check "fifty edits give what the lesson file edited by hand gives, byte for byte" \
    python3 tests/check_set.py ./attnstep "$tmp" lessons/*.yaml tests/gradients/by_token.yaml

check "an unknown matrix: the nearest name and the lesson's matrices" refused 'W_X[0,0]=1' \
    "no such matrix: 'W_X'; did you mean 'W_Q'? this lesson's are embeddings, W_Q, W_K, W_V, W_O"
check "a row out of range: the range" refused 'W_Q[9,0]=1' \
    "no such row: row 9 is out of range: W_Q has rows 0 to 3"
check "a column out of range: the range" refused 'W_K[0,4]=1' \
    "no such column: column 4 is out of range: W_K has columns 0 to 3"
check "a token the lesson lacks" refused 'embeddings[cow,0]=1' \
    "no such row: 'cow' is not a token of embeddings (name a row by token or 0-based index)"
check "a token's row out of range" refused 'embeddings[7,0]=1' \
    "no such row: row 7 is out of range: embeddings has rows 0 to 4"
check "a bias the lesson does not give" refused 'b_Q[0]=1' \
    "this lesson has no such matrix: 'b_Q' is not given (a bias exists only where the lesson writes one)"
check "the norm's gain without a norm" refused 'gain[0]=1' \
    "this lesson has no such matrix: 'gain' is not given (the norm's gain exists with 'norm:', its bias with a layer norm only)"
check "a target without a loss" refused 'target[bank,0]=1' \
    "this lesson has no such matrix: 'target' exists only with 'loss: {target: …}'"
check "source embeddings in self-attention" refused 'source_embeddings[bank,0]=1' \
    "this lesson has no such matrix: 'source_embeddings' exists only in cross-attention (with 'source')"
check "a matrix named with one index" refused 'W_Q[0]=1' \
    "write NAME[ROW,COL]=VALUE (a bias: NAME[COL]=VALUE): 'W_Q' has rows and columns: write W_Q[ROW,COL]"
check "no cell at all" refused 'W_Q=1' "write NAME[ROW,COL]=VALUE (a bias: NAME[COL]=VALUE)"
check "not a number" refused 'W_Q[0,0]=abc' \
    "the value is not a decimal number: 'abc' (write e.g. 0.25 or -1e-3)"
check "a number with trailing text" refused 'W_Q[0,0]=1.5x' \
    "the value is not a decimal number: '1.5x' (write e.g. 0.25 or -1e-3)"
check "nan" refused 'W_Q[0,0]=nan' \
    "the value is not a finite number: 'nan' (a lesson's numbers are finite doubles)"
check "a number too large for a double" refused 'W_Q[0,0]=1e400' \
    "the value is not a finite number: '1e400' (a lesson's numbers are finite doubles)"
check "a number that rounds to zero" refused 'W_Q[0,0]=1e-400' \
    "the value is not a decimal number: '1e-400' rounds to zero in a double: write 0"
check "a repeated token by its plain name, where rows are written one by one" refused \
    'embeddings[the,0]=1' "no such row: 'the' appears at positions 0 and 2: write the@0 or the@2" \
    tests/set/by_position.yaml
first_bad() {
    ./attnstep --json --set 'W_Q[0,0]=1' --set 'W_V[0,5]=1' --set 'W_X[0,0]=1' \
        lessons/bank_river.yaml 2>&1 | grep -qx "attnstep: --set: 'W_V\[0,5\]=1': no such column: column 5 is out of range: W_V has columns 0 to 3"
}
check "the first bad edit of several is named" first_bad

# cat_sat's narration states the vectors as numbers: an edit makes those statements false claims
stale_vectors() {
    local err
    err=$(./attnstep --check --set 'embeddings[cat,0]=2' lessons/cat_sat.yaml 2>&1 >/dev/null)
    [ $? -eq 65 ] || { echo "exit status not 65"; return 1; }
    grep -q "claim 'input\[cat,0\] = 1.0' is false: input\[cat,0\] is 2.0" <<<"$err" \
        && grep -q "claim 'Q\[cat,0\] = 1.0' is false" <<<"$err" \
        && grep -q "claim 'K\[cat,0\] = 1.0' is false" <<<"$err" \
        || { echo "the stated vectors are not named false:"; echo "$err" | head -6; return 1; }
}
check "an edit of cat's embedding makes cat_sat's stated vectors false claims" stale_vectors

# a repeated token written once in embeddings: its plain name and any position change every row
same_json() {  # same_json LESSON [ARGS...] -- [ARGS...]: both exit 0 with the same --json
    local lesson=$1 first=(); shift
    while [ "$1" != -- ]; do first+=("$1"); shift; done; shift
    local a b
    a=$(./attnstep --json "${first[@]}" "$lesson") || { echo "exit status $?"; return 1; }
    b=$(./attnstep --json "$@" "$lesson") || { echo "exit status $?"; return 1; }
    [ "$a" = "$b" ] || { echo "outputs differ: ${first[*]} / $*"; return 1; }
}
check "a shared vector: dog, dog@1 and dog@4 name the one mapping entry" \
    same_json tests/set/by_token.yaml --set 'embeddings[dog,1]=0.75' -- --set 'embeddings[dog@4,1]=0.75'
check "a shared vector changes every row of its token" \
    prints -x '       \[0.75, 1.5403023058681398\],' -- \
    ./attnstep --json --set 'embeddings[dog,0]=-0.09147098480789650' tests/set/by_token.yaml
check "--set edits in order: the last of two on one cell wins" \
    same_json lessons/scrambled.yaml --set 'W_Q[1,1]=0.5' --set 'W_Q[1,1]=2' -- --set 'W_Q[1,1]=2'
check "an edit that changes nothing changes no byte" \
    same_json lessons/scrambled.yaml --set 'W_K[0,0]=1' --
claims_said() {  # an edit that makes claims false: warnings, the numbers, exit 0
    local out
    out=$(./attnstep --explain 'weights[cat,sat]' --set 'embeddings[cat,1]=2' lessons/cat_sat.yaml \
          2>"$tmp/said") || { echo "exit status $?"; return 1; }
    [ "$out" = "weights[cat,sat] = exp(1.4142 − 3.5355) / (exp(3.5355 − 3.5355) [cat] + exp(1.4142 − 3.5355) [sat]) = 0.107" ] \
        || { echo "got: $out"; return 1; }
    grep -q "^lessons/cat_sat.yaml:91:9: warning: claim 'scores\[cat,sat\] = 0.5' is false: scores\[cat,sat\] is 2.0$" "$tmp/said" \
        || { echo "no warning for the claim made false:"; cat "$tmp/said"; return 1; }
}
check "claims an edit made false are warnings; the numbers follow the edit" claims_said
check "--check --set refuses the claims an edit made false" expect_status 65 \
    ./attnstep --check --set 'embeddings[cat,1]=2' lessons/cat_sat.yaml 2>/dev/null
check "--set is refused with --cost" expect_status 64 ./attnstep --cost --set 'W_Q[0,0]=1' 2>/dev/null

# the UI and --compare take the same edits (headless)
printf 'q\n' >"$tmp/quit.keys"
check "--set in the UI: a bad edit exits 64" expect_status 64 \
    ./attnstep --keys "$tmp/quit.keys" --set 'W_Q[9,0]=1' lessons/cat_sat.yaml 2>/dev/null
check "--compare A --set: the lesson against its edited self" prints -q '1 of 32 cells differ' -- \
    ./attnstep --keys "$tmp/quit.keys" --compare --set 'embeddings[birds,0]=2' lessons/no_scale.yaml
# issue 27: an edit at a training step drops the trained traces kept (train_cache_at), so the
# step shows the edited lesson trained that many steps: the matrix --set shows there
printf '>\n>\n>\n>\n>\ndump\n=\n2\nenter\ndump\n' >"$tmp/train_edit.keys"
printf '>\n>\n>\n>\n>\ndump\n' >"$tmp/train_set.keys"
trained_edit() {
    local at='Q[bank,0]' lesson=lessons/learn_bank_river.yaml edited set before
    ./attnstep --keys "$tmp/train_edit.keys" --at "$at" "$lesson" >"$tmp/edited" \
        || { echo "exit status $?"; return 1; }
    ./attnstep --keys "$tmp/train_set.keys" --set 'W_Q[0,0]=2' --at "$at" "$lesson" \
        >"$tmp/set" || { echo "exit status $?"; return 1; }
    before=$(sed -n '/^--- screen 1/,/^--- screen 2/p' "$tmp/edited" | sed -n 2,12p)
    edited=$(sed -n '/^--- screen 2/,$p' "$tmp/edited" | sed -n 2,12p)
    set=$(sed -n 2,12p "$tmp/set")
    grep -q 'trained 5/40' <<<"$edited" || { echo "not at training step 5:"; echo "$edited"; return 1; }
    [ "$before" != "$edited" ] || { echo "the edit changed nothing at step 5"; return 1; }
    [ "$edited" = "$set" ] || { echo "step 5 after the edit is not --set's:"; diff <(echo "$edited") <(echo "$set"); return 1; }
}
check "an edit at a training step shows the edited lesson trained to it (--set's numbers)" trained_edit
# w keeps the experiment: a new file beside the lesson, whose numbers are the edited lesson's
mkdir -p "$tmp/kept"
cp lessons/*.yaml lessons/*.npy "$tmp/kept/"
cp tests/gradients/by_token.yaml "$tmp/kept/random_weights.yaml"   # weights of 17 digits
printf '=\n3\nenter\n]\n]\n=\nright\n5\nenter\n]\n]\n]\n]\n]\n]\n]\n=\n7\nenter\nw\nw\n' >"$tmp/write.keys"
kept_as_set() {  # kept_as_set LESSON: w's file gives what --set of its edits gives, twice
    local lesson=$tmp/kept/$1.yaml written=$tmp/kept/$1-whatif.yaml edits=()
    ./attnstep --keys "$tmp/write.keys" --at 'input[0,0]' "$lesson" >/dev/null 2>&1
    [ -f "$written" ] || { echo "w wrote no $written"; return 1; }
    cmp -s "$written" "$tmp/kept/$1-whatif-2.yaml" || { echo "w twice: two files expected"; return 1; }
    while read -r _ _ edit _; do edits+=(--set "${edit//\'/}"); done \
        < <(grep "^#   --set '" "$written")
    [ ${#edits[@]} -ge 4 ] || { echo "$written names fewer than two edits"; return 1; }
    # the edits may make the lesson's claims false, which --set says and goes on from (the file
    # alone is refused, as it must be): each edit set again on the written file, a number it
    # already holds, so the others' numbers are the file's own
    for again in "${edits[1]}" "${edits[3]}"; do
        cmp -s <(./attnstep --json --set "$again" "$written" 2>/dev/null) \
               <(./attnstep --json "${edits[@]}" "$lesson" 2>/dev/null) \
            || { echo "$written (with --set $again) differs from ${edits[*]}"; return 1; }
    done
    ./attnstep --json "$written" >/dev/null 2>&1
    [ $? -eq 0 ] || ./attnstep --check "$written" 2>&1 | grep -q "is false\|is not" \
        || { echo "$written is refused for something but its claims"; return 1; }
}
for lesson in bank_river cat_sat biases cross gqa rope four_heads causal random_weights; do
    check "w on $lesson: a new file whose numbers are --set's" kept_as_set "$lesson"
done
kept_numpy() {
    ./attnstep --keys "$tmp/write.keys" --at 'input[0,0]' "$tmp/kept/numpy_seed42.yaml" \
        | grep -q "not written: this lesson draws numbers with numpy" \
        || { echo "numpy's draws: no refusal"; return 1; }
    [ ! -e "$tmp/kept/numpy_seed42-whatif.yaml" ] || { echo "a file was written"; return 1; }
}
check "w refuses a lesson drawn with numpy (the rewrite would change the draws)" kept_numpy
kept_norm() {   # the gain behind a cell of normed is a key of norm:, never a top-level gain:
    cp tests/reference/norm_pre_layer_rope.yaml "$tmp/kept/norm.yaml"
    printf '=\n3\nenter\nw\n' >"$tmp/norm.keys"
    ./attnstep --keys "$tmp/norm.keys" --at 'normed[x,0]' "$tmp/kept/norm.yaml" \
        | grep -q "not written: the norm's gain is a key of 'norm:'" \
        || { echo "the norm's gain: no refusal"; return 1; }
    [ ! -e "$tmp/kept/norm-whatif.yaml" ] || { echo "a file was written"; return 1; }
}
check "w refuses an edit of the norm's gain (written inside norm:)" kept_norm
exit "$failures"
