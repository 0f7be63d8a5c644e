#!/usr/bin/env bash
# The layers of docs/DESIGN.md, checked on the source: which headers each folder of src/ may
# include, that only src/lesson reaches libyaml, only src/ui curses and only src/net zmq or
# sockets, and that the core stays pure (no I/O calls, no getenv, no writable file-scope
# variables), as does the classroom message format (src/net/net_message.c).
set -u
cd "$(dirname "$0")/.."
# A layer's folder may have subfolders (src/core/ops/): their files are the layer's, checked alike;
# nullglob, so that a pattern no file matches is no file rather than itself.
shopt -s nullglob
failed=0
fail() { echo "FAIL $*"; failed=1; }

# Which layers' headers a layer may include (besides its own).
declare -A may_use=(
    [core]="" [text]="" [lesson]="core text" [output]="core text lesson"
    [ui]="core text lesson output net" [cli]="core text lesson output ui net" [net]="text"
)
for layer in core text lesson output ui net cli; do
    [ -d "src/$layer" ] || { fail "src/$layer is missing"; continue; }
    for file in src/$layer/*.[ch] src/$layer/*/*.[ch]; do
        while IFS= read -r header; do
            home=$(cd src && ls -d */"$header" "$(dirname "${file#src/}")/$header" 2>/dev/null | head -n 1)
            home=${home%%/*}
            [ -n "$home" ] || { fail "$file includes \"$header\", which is in no layer"; continue; }
            [ "$home" = "$layer" ] && continue
            [[ " ${may_use[$layer]} " == *" $home "* ]] \
                || fail "$file (layer $layer) includes \"$header\" of layer $home"
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
    done
done

# Libraries that belong to one layer each.
check_library() {  # check_library PATTERN LAYER WHAT
    local hits
    hits=$(grep -lE "^[[:space:]]*#[[:space:]]*include[[:space:]]*<($1)" src/*/*.[ch] src/*/*/*.[ch] | grep -v "^src/$2/")
    [ -z "$hits" ] || fail "$3 included outside src/$2: $hits"
}
check_library 'yaml\.h' lesson "libyaml"
check_library 'n?curses(w)?\.h|ncursesw/|term\.h' ui "curses"
check_library 'utf8proc\.h' text "utf8proc"
check_library 'zmq\.h|sys/socket\.h|netinet/|arpa/inet\.h|netdb\.h' net "zmq or socket headers"

# The core: plain structs in and out.
impure=$(grep -nE '\b(getenv|secure_getenv|fopen|freopen|fprintf|printf|puts|fputs|fputc|putchar|fwrite|fread|scanf|fscanf|perror|exit)[[:space:]]*\(' src/core/*.[ch] src/core/*/*.[ch] src/net/net_message.[ch])
[ -z "$impure" ] || fail "the core or the classroom message format does I/O or reads the environment:
$impure"
globals=$(grep -nE '^(static[[:space:]]+)?[A-Za-z_][A-Za-z_0-9 ]*[[:space:]*]+[A-Za-z_][A-Za-z_0-9]*[[:space:]]*(\[[^]]*\])?[[:space:]]*(=[^=]|;)' src/core/*.c src/core/*/*.c \
          | grep -vE ':(static[[:space:]]+)?(const|typedef|return|enum|struct [a-z_]+ \{)|const[[:space:]]+[a-z_]+[[:space:]]*\*?[[:space:]]*const|\(')
[ -z "$globals" ] || fail "the core has writable file-scope variables:
$globals"

# The same on the compiled objects, which also sees what the pattern above cannot: a static
# inside a function (a ring of buffers in explain.c was one). A writable variable lives in .bss,
# .data, thread-local storage or a common block; tables of const pointers sit in .data.rel.ro
# (nm's 'd' too, so the section is read, not the letter). Names the compiler makes (__…, .L…)
# are not the source's variables.
build=${BUILD:-build}
objects=("$build"/core/*.o "$build"/core/*/*.o "$build"/net/net_message.o)
if [ ${#objects[@]} -eq 0 ]; then
    fail "no objects of the core in $build/core: build first (make)"
else
    writable=$(for object in "${objects[@]}"; do
        nm --format=sysv --defined-only "$object" | awk -F'|' -v object="$object" '
            { name = $1; section = $7; gsub(/ /, "", name); gsub(/ /, "", section) }
            name !~ /^(__|\.)/ && (section ~ /^\.(bss|tbss|tdata)(\.|$)/ \
                || section ~ /^\.data(\.|$)/ && section !~ /^\.data\.rel\.ro/ \
                || section == "*COM*") { print object ": " name " in " section }'
    done)
    [ -z "$writable" ] || fail "the core or the classroom message format keeps writable state:
$writable"
fi

[ $failed -eq 0 ] && echo "layers: every include and library where it belongs; the core is pure"
exit $failed
