#!/usr/bin/env bash
# The documentation is true: --help, the man page and getopt's table list the same options; the
# man page names every environment variable, exit status and key-script word; the runnable
# examples (```console blocks) of README.md and lessons/README.md print what they show.
set -u
cd "$(dirname "$0")/.."
make -s build/attnstep.1 >/dev/null || { echo "check_docs: cannot build the man page"; exit 1; }
exec /usr/bin/python3 tests/check_docs.py ./attnstep build/attnstep.1 README.md lessons/README.md
