#!/usr/bin/env python3
"""The documentation against the program. Part one: the options in --help, in the manual page's
OPTIONS and in getopt_long's table (src/cli/main.c) are the same set, and getopt accepts each;
every environment variable the source reads, every exit status, and every key-script word are
in the manual page (and the variables and statuses in --help). Part two: every runnable example
in README.md and lessons/README.md is run and its shown output compared.

A runnable example is a fenced ```console block; each line starting with "$ " is a command (run
by bash in a scratch folder where lessons/ and tests/ are the repository's, with `attnstep` the
one built, LANG=C.UTF-8 and no ATTNSTEP_LESSONS or NO_COLOR; the commands of one file share the
folder, so one may write a lesson the next reads), and the lines after it, up to the next command or the fence,
are what it prints (stdout and stderr together). A command must exit 0 unless the next
command is `echo $?`, whose shown line is then the status it must exit with.
Usage: check_docs.py ATTNSTEP MANPAGE DOC..."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

failures = 0


def fail(message):
    global failures
    failures += 1
    print("FAIL " + message)


def ok(message):
    print("ok   " + message)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def man_section(man, name):
    """The troff lines of one .SH section."""
    lines, inside = [], False
    for line in man.splitlines():
        if line.startswith(".SH "):
            inside = line[4:].strip('"') == name
        elif inside:
            lines.append(line)
    return lines


def unescape(troff):
    return re.sub(r"\\f[BIRP]|\\&", "", troff).replace("\\-", "-")


def table_options(source):
    """(name, has_arg) of every row of option_table in main.c, and the short options."""
    body = source[source.index("option_table[] = {"):]
    body = body[:body.index("\n};")]
    rows = re.findall(r'\{ "([a-z-]+)", (\'.\'|0), (no|required|optional)_argument', body)
    return {name: kind for name, _, kind in rows}, {s.strip("'") for _, s, _ in rows if s != "0"}


def usage_options(text):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z])(?![\w-])", text))


def check_options(attnstep, man):
    source = open("src/cli/main.c", encoding="utf-8").read()
    table, shorts = table_options(source)
    from_table = {"--" + n for n in table} | {"-" + s for s in shorts}
    help_text = run([attnstep, "--help"]).stdout
    in_help = set()
    for line in help_text.splitlines():
        m = re.match(r"^  (-\S.*?)(?:\s{2,}|$)", line)
        if m:
            in_help |= usage_options(m.group(1))
    options_man = man_section(man, "OPTIONS")
    in_man = set()
    for i, line in enumerate(options_man[:-1]):
        if line == ".TP":
            in_man |= usage_options(unescape(options_man[i + 1]))
    for where, found in (("--help", in_help), ("the man page", in_man)):
        if found == from_table:
            ok(f"{where} lists the {len(from_table)} options of getopt's table")
        else:
            fail(f"{where} and getopt's table differ: missing {sorted(from_table - found)}, "
                 f"extra {sorted(found - from_table)}")
    for name, kind in table.items():  # getopt takes each as the table says
        arg = {"no": [], "required": ["--" + name, "x"], "optional": []}[kind]
        args = arg if arg else ["--" + name]
        err = run([attnstep] + args + ["/nonexistent.yaml"], stdin=subprocess.DEVNULL).stderr
        if "unrecognized option" in err or "requires an argument" in err:
            fail(f"getopt does not take --{name}: {err.strip()}")
    ok("getopt takes every option of the table")
    return help_text


def check_environment_and_status(man, help_text):
    names = set()
    for path in glob.glob("src/*/*.c"):
        names |= set(re.findall(r'getenv\("([A-Z_]+)"\)', open(path, encoding="utf-8").read()))
    env_man = unescape("\n".join(man_section(man, "ENVIRONMENT")))
    env_help = help_text[help_text.index("Environment:"):]
    for name in sorted(names):
        if not re.search(rf"\b{name}\b", env_man):
            fail(f"the man page's ENVIRONMENT lacks {name}")
        if not re.search(rf"\b{name}\b", env_help):
            fail(f"--help's Environment lacks {name}")
    ok(f"the man page and --help name the {len(names)} environment variables the source reads")
    codes = re.findall(r"= (\d+)", open("src/output/exit_status.h", encoding="utf-8").read())
    codes += ["130", "143", "129"]  # 128 + SIGINT, SIGTERM, SIGHUP (src/ui/ui.h)
    status_man = man_section(man, "EXIT STATUS")
    status_help = help_text[help_text.index("Exit status:"):]
    for code in codes:
        if f".B {code}" not in status_man:
            fail(f"the man page's EXIT STATUS lacks {code}")
        if not re.search(rf"\b{code}\b", status_help):
            fail(f"--help's exit status lacks {code}")
    ok(f"the man page and --help give the {len(codes)} exit statuses")
    keys = open("src/ui/ui_keys.c", encoding="utf-8").read()
    names_table = keys[keys.index("key_names[] = {"):]
    words = re.findall(r'\{[^{}"]*?, "([a-z0-9-]+)", "', names_table[:names_table.index("\n};")])
    words += re.findall(r'strn?cmp\(word, "([a-z]+) ?"', keys)
    scripts = unescape("\n".join(man_section(man, "KEY SCRIPTS")))
    missing = [w for w in words if not re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", scripts)]
    if missing or len(words) < 20:
        fail(f"the man page's KEY SCRIPTS lacks {missing} (of {len(words)} words)")
    else:
        ok(f"KEY SCRIPTS names all {len(words)} words the key-script reader knows")


def examples(path):
    """(line number, command, shown output lines) of each command in ```console blocks."""
    found, block, command = [], None, None
    for number, line in enumerate(open(path, encoding="utf-8").read().splitlines(), 1):
        if block is None:
            if line.strip() == "```console":
                block = line[:line.index("`")]  # the fence's indent, as in a list item
            continue
        line = line[len(block):] if line.startswith(block) else line
        if line.strip() == "```" or line.startswith("$ "):
            if command:
                found.append(command)
            command = None
            if line.strip() == "```":
                block = None
                continue
            command = (number, line[2:], [])
        elif command:
            command[2].append(line)
    return found


def check_examples(attnstep, docs):
    root = os.getcwd()
    env = {k: v for k, v in os.environ.items() if k not in ("ATTNSTEP_LESSONS", "NO_COLOR")}
    # a scratch folder to run in, so that examples may write files: lessons/ and tests/ are
    # links to the repository's, and `attnstep` on PATH is the one built
    work = tempfile.mkdtemp(prefix="attnstep-docs-")
    os.mkdir(f"{work}/bin")
    os.symlink(os.path.abspath(attnstep), f"{work}/bin/attnstep")
    for folder in ("lessons", "tests"):
        os.symlink(f"{root}/{folder}", f"{work}/{folder}")
    env.update(LANG="C.UTF-8", LC_ALL="", PATH=f"{work}/bin:{env['PATH']}")
    try:
        run_examples(docs, env, work)
    finally:
        shutil.rmtree(work)


def run_examples(docs, env, work):
    total = 0
    for doc in docs:
        commands = examples(doc)
        status = None
        for i, (number, command, shown) in enumerate(commands):
            where = f"{doc}:{number}: $ {command}"
            if command == "echo $?":
                if shown != [str(status)]:
                    fail(f"{where}: exit status {status}, the text shows {shown}")
                continue
            total += 1
            done = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                                  env=env, cwd=work, stdin=subprocess.DEVNULL)
            status = done.returncode
            got = (done.stdout + done.stderr).splitlines()
            expects_status = i + 1 < len(commands) and commands[i + 1][1] == "echo $?"
            if got != shown:
                fail(f"{where}: prints\n" + "\n".join("  | " + g for g in got) +
                     "\n  but the text shows\n" + "\n".join("  | " + s for s in shown))
            elif status != 0 and not expects_status:
                fail(f"{where}: exit status {status} (show it with `$ echo $?`)")
            else:
                ok(f"{doc}:{number}: $ {command}")
    if total < 5:
        fail(f"only {total} runnable examples found in {' '.join(docs)}")


def check_facts(attnstep, man):
    """Part three: sentences of the docs that were once false, each held to what the program
    does: the exit status of a missing data file, --check's trace, the template's forms and the
    keys table's keys (read from the loader's table, so a new key must be documented)."""
    work = tempfile.mkdtemp()
    try:
        lesson = os.path.join(work, "l.yaml")
        with open(lesson, "w") as f:
            f.write("title: t\ntokens: [a]\nembeddings: {file: missing.npy}\n")
        status = run([attnstep, "--check", lesson]).returncode
        readme = open("README.md", encoding="utf-8").read()
        rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| (\d+) \| (.*) \|$", readme, re.M)}
        data_rows = [code for code, text in rows.items() if "data file" in text]
        if data_rows == [str(status)]:
            ok(f"README's exit table: a missing data file is {status}, in that row only")
        else:
            fail(f"a missing data file exits {status}, but README's rows naming a data file are "
                 f"{data_rows}")
        with open(lesson, "w") as f:   # a false claim: only a computed trace can find it
            f.write("title: t\ntokens: [a]\nembeddings: {a: [1]}\nsteps:\n  - stage: weights\n"
                    "    expect: weights[a,a] < 0.5\n")
        computes = run([attnstep, "--check", lesson]).returncode == 65
        flat = re.sub(r"\\-", "-", man)
        if computes and "no trace" not in flat and "trace is computed" in flat:
            ok("the man page says --check computes the trace, as it does")
        else:
            fail("the man page's --check must say the trace is computed (a false claim is found)")
    finally:
        shutil.rmtree(work)
    scroll_notes(readme)
    template = run([attnstep, "--template"]).stdout
    for form in ["rope", "{window: W}", "{file: NAME.npy}", "numpy", "norm: {kind: layer",
                 "residual: true", "dropout: {p:", "contributions: true"]:
        (ok if form in template else fail)(f"the template's comments name {form}")
    keys_doc = open("lessons/README.md", encoding="utf-8").read()
    table = set(re.findall(r"^\| ((?:`[^`]+`(?:, )?)+) \|", keys_doc, re.M))
    documented = {k for row in table for k in re.findall(r"`([^`]+)`", row)}
    private = open("src/lesson/lesson_private.h", encoding="utf-8").read()
    top = re.search(r"#define TOP_KEYS\(X\)(.*?)\n#define", private, re.S).group(1)
    for key in re.findall(r'X\(\w+, "([^"]+)"\)', top):
        (ok if key in documented else fail)(f"lessons/README.md's keys table lists {key}")


def scroll_notes(readme):
    """The UI's scroll note ("rows 1–8 of 30, cols 0–6 of 30") is 0-based, as the labels are:
    its last index is below the count, in README's example and on every golden screen."""
    note = re.compile(r"(rows|cols) (\d+)[–-](\d+) of (\d+)")
    flat = re.sub(r"\s+", " ", readme)
    in_readme = list(note.finditer(flat))
    shown = in_readme + [m for path in sorted(glob.glob("tests/screens/*.screen"))
                         for m in note.finditer(open(path, encoding="utf-8").read())]
    wrong = [m.group(0) for m in shown if int(m.group(3)) >= int(m.group(4))]
    if in_readme and not wrong:
        ok(f"the scroll note is 0-based in README and the golden screens ({len(shown)} notes)")
    else:
        fail(f"a scroll note is not 0-based (or README gives none): {wrong[:3]}")


def main():
    attnstep, man_path, docs = sys.argv[1], sys.argv[2], sys.argv[3:]
    man = open(man_path, encoding="utf-8").read()
    help_text = check_options(attnstep, man)
    check_environment_and_status(man, help_text)
    check_examples(attnstep, docs)
    check_facts(attnstep, man)
    print(f"docs: {failures} failed")
    sys.exit(1 if failures else 0)


main()
