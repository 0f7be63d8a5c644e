"""Shared by the Python checks that drive attnstep (check_questions.py, check_steps.py): running
it with a state folder of its own, the headless UI's screens for a key script, and the verdict
line of each lesson."""
import os
import subprocess
import sys
import tempfile


def run(*args):
    """The program's stdout; the check stops with FAIL and its stderr when it does not exit 0.
    Each run keeps progress in a state folder of its own: no run opens where another left the
    lesson, none writes the real home."""
    with tempfile.TemporaryDirectory() as state:
        done = subprocess.run(args, capture_output=True, text=True,
                              env=dict(os.environ, LANG="C.UTF-8", LC_ALL="", XDG_STATE_HOME=state))
    if done.returncode != 0:
        sys.exit(f"FAIL {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def screens(program, lesson, keys, size):
    """The screens the headless UI dumps running the key script text keys at size ("120x40"),
    each a list of its lines without the "--- screen N" line (the last is the one dumped at the
    end)."""
    with tempfile.NamedTemporaryFile("w", suffix=".keys", delete=False) as script:
        script.write(keys)
    try:
        out = run(program, "--keys", script.name, "--screen", size, lesson)
    finally:
        os.unlink(script.name)
    return [dump.split("\n")[1:] for dump in out.split("--- screen ")[1:]]


def report(lesson, problems, ok_text):
    """Prints the lesson's verdict (its problems, or ok_text); 1 when it failed, else 0."""
    if problems:
        print(f"FAIL {lesson}:\n  " + "\n  ".join(problems))
        return 1
    print(f"ok   {lesson}: {ok_text}")
    return 0
