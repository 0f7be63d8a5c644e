#!/usr/bin/python3
"""--set against the lesson file edited by hand (issue 29), byte for byte.

Fifty edits drawn with a fixed seed over the shipped lessons and a lesson with a loss (for the
target), each parameter kind among them (embeddings, source_embeddings, W_Q ... W_O, the biases,
the norm's gain and bias, the target), each run in one of the modes that print numbers (--json, --plain, --markdown,
--csv, --explain; --check by its status): attnstep --set EDIT LESSON must print what attnstep
prints for a copy of the lesson whose YAML holds the new number, and exit the same way. The copy
is written here, independently of attnstep's own code: the lesson read with PyYAML, the number
changed in its list, the whole file written again. A matrix the file does not write as numbers
(identity, left out, {random:}, {file:}) is written inline first: identity by its rule, the
others from attnstep's --json (the weights of a lesson with a loss; the embeddings of a lesson
without positions, which are its input stage), 17 digits that read back to the same doubles.
Usage: check_set.py ATTNSTEP SCRATCH_DIR LESSON..."""
import json
import os
import random
import re
import shutil
import subprocess
import sys

import yaml

ATTNSTEP, SCRATCH, LESSONS = sys.argv[1], sys.argv[2], sys.argv[3:]
MODES = ["--json", "--plain", "--markdown", "--csv", "--explain", "--check"]
WEIGHTS = ["W_Q", "W_K", "W_V", "W_O"]
BIASES = ["b_Q", "b_K", "b_V", "b_O"]
NORM = ["gain", "bias"]   # the norm's, written inside norm:


class Loader(yaml.SafeLoader):
    """YAML 1.2's booleans, as libyaml's users read them: a token `on` stays the word on."""


Loader.yaml_implicit_resolvers = {
    key: [(tag, rule) for tag, rule in value if tag != "tag:yaml.org,2002:bool"]
    for key, value in yaml.SafeLoader.yaml_implicit_resolvers.items()}
Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|false)$"),
                             list("tf"))


def run(*arguments):
    result = subprocess.run([ATTNSTEP, *arguments], capture_output=True, timeout=120)
    return result.returncode, result.stdout


def token_list(data, key):
    """tokens: a list, or a text split at spaces."""
    tokens = data[key]
    return tokens.split() if isinstance(tokens, str) else [str(t) for t in tokens]


def is_form(value):
    """{random: ...} or {file: ...}: a matrix the file does not write as numbers."""
    return isinstance(value, dict) and ("random" in value or "file" in value)


def shape(data, traced):
    d_model = traced["d_model"]
    heads = data.get("heads", 1)
    kv = data.get("kv_heads", heads) * (d_model // heads)
    return d_model, kv


def weight(data, traced, name):
    """The whole matrix (or bias) as numbers, or None when neither the file nor --json has it."""
    d_model, kv = shape(data, traced)
    value = data.get(name, "identity" if name in WEIGHTS else None)
    if isinstance(value, list):
        return value
    if value == "identity":
        cols = kv if name in ("W_K", "W_V") else d_model
        return [[1.0 if r == c else 0.0 for c in range(cols)] for r in range(d_model)]
    if is_form(value):
        return traced.get("params", {}).get(name)
    return None


def norm_vector(data, traced, name):
    """The norm's gain or bias (written inside norm:, ones and zeros when left out), or None."""
    norm = data.get("norm")
    if not isinstance(norm, dict) or (name == "bias" and norm.get("kind") == "rms"):
        return None
    value = norm.get(name, [1.0 if name == "gain" else 0.0] * traced["d_model"])
    return value if isinstance(value, list) else traced.get("params", {}).get(name)


def embeddings(data, traced):
    """The embeddings as a mapping token -> vector, or None."""
    value = data["embeddings"]
    if not is_form(value):
        return value
    if data.get("positional", "none") != "none" or "source" in data:
        return None
    tokens = token_list(data, "tokens")
    if len(set(tokens)) != len(tokens):
        return None
    rows = traced["stages"][0]["values"]   # input = embeddings without positions
    return {token: rows[i] for i, token in enumerate(tokens)}


def target(data, traced):
    loss = data.get("loss")
    if not loss:
        return None
    value = loss["target"]
    return traced["target"] if is_form(value) else value


def candidates(data, traced):
    """(kind, matrix) pairs this lesson can be edited in, each with its numbers inline."""
    found = []
    for name in WEIGHTS + BIASES:
        matrix = weight(data, traced, name)
        if matrix is not None:
            found.append((name, matrix))
    for name in NORM:
        vector = norm_vector(data, traced, name)
        if vector is not None:
            found.append((name, vector))
    vectors = embeddings(data, traced)
    if vectors is not None:
        found.append(("embeddings", vectors))
        if "source" in data:
            found.append(("source_embeddings", vectors))
    rows = target(data, traced)
    if rows is not None:
        found.append(("target", rows))
    return found


def inline_draws(data, options):
    """Every {random: ...} matrix of data written as its numbers (options: candidates())."""
    for kind, matrix in options.items():
        if kind == "target":
            value = data.get("loss", {}).get("target")
        else:
            value = data.get("embeddings" if kind.endswith("embeddings") else kind)
        if not (isinstance(value, dict) and "random" in value):
            continue
        if kind == "target":
            data["loss"]["target"] = matrix
        elif kind.endswith("embeddings"):
            data["embeddings"] = matrix
        else:
            data[kind] = matrix
    data.pop("draw_order", None)


def draw_value(rng):
    value = rng.choice([rng.uniform(-2, 2), rng.uniform(-0.1, 0.1), float(rng.randint(-3, 3))])
    return rng.choice(["%.4f" % value, "%.2e" % value, repr(value)])


def draw_edit(rng, data, kind, matrix):
    """The --set text of one cell of matrix, and the lesson data with that cell changed."""
    value = draw_value(rng)
    if kind in ("embeddings", "source_embeddings", "target") and isinstance(matrix, dict):
        tokens = token_list(data, "source" if kind == "source_embeddings" else "tokens")
        row = rng.randrange(len(tokens))
        token = tokens[row]
        col = rng.randrange(len(matrix[token]))
        vectors = {k: list(v) for k, v in matrix.items()}
        vectors[token][col] = float(value)
        # a token written once may be named by its index too
        name = str(row) if rng.random() < 0.25 and tokens.count(token) == 1 else token
        if kind == "target":
            data["loss"]["target"] = vectors
        else:
            data["embeddings"] = vectors
        return "%s[%s,%d]=%s" % (kind, name, col, value)
    if matrix and not isinstance(matrix[0], list):   # a bias, or the norm's gain or bias
        col = rng.randrange(len(matrix))
        owner = data["norm"] if kind in NORM else data
        owner[kind] = [float(x) for x in matrix]
        owner[kind][col] = float(value)
        return "%s[%d]=%s" % (kind, col, value)
    row, col = rng.randrange(len(matrix)), rng.randrange(len(matrix[0]))
    rows = [[float(x) for x in r] for r in matrix]
    rows[row][col] = float(value)
    if kind == "target":
        data["loss"]["target"] = rows
    else:
        data[kind] = rows
    return "%s[%d,%d]=%s" % (kind, row, col, value)


def mode_arguments(rng, mode, traced):
    stages = [s for s in traced["stages"] if not s["name"].startswith("d_")]
    stage = rng.choice(stages)
    if mode == "--csv":
        return ["--csv", stage["name"]] + (["--head", str(stage["head"])] if stage["head"] else [])
    if mode == "--explain":
        cell = "%s[%d,%d]" % (stage["name"], rng.randrange(len(stage["rows"])),
                              rng.randrange(len(stage["cols"])))
        return ["--explain", cell] + (["--head", str(stage["head"])] if stage["head"] else [])
    return [mode]


def main():
    rng = random.Random(29)
    failures, printed, copy_refused, kinds, modes = [], 0, 0, set(), set()
    lessons = []
    for path in LESSONS:
        # a copy that keeps a {file:} form reads its data file beside it, as the original does
        folder = os.path.dirname(path) or "."
        for name in os.listdir(folder):
            if name.endswith((".npy", ".csv")):
                shutil.copy(os.path.join(folder, name), SCRATCH)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        status, out = run("--json", path)
        assert status == 0, path
        lessons.append((path, text, json.loads(out)))
    # what each lesson can be edited in: a lesson whose every matrix is drawn (real_size.yaml:
    # xavier weights, positions added to random embeddings) has nothing that --json writes out
    # for the copy, so it is never picked
    kinds_of = {path: {kind for kind, _ in candidates(yaml.load(text, Loader=Loader), traced)}
                for path, text, traced in lessons}
    # every kind at least once, then any: the first draws walk the kinds in turn
    every = sorted(set().union(*kinds_of.values()))
    for n in range(50):
        want = every[n] if n < len(every) else None
        choices = [(p, t, tr) for p, t, tr in lessons
                   if kinds_of[p] and (want is None or want in kinds_of[p])]
        path, text, traced = rng.choice(choices)
        data = yaml.load(text, Loader=Loader)
        options = dict(candidates(data, traced))
        kind = want or rng.choice(sorted(options))
        # numpy's draws of one seed follow one another (draw_order): a matrix written inline
        # draws nothing, which would move the draws of those after it, so every drawn matrix is
        # written inline, as --json gives it, before the one cell is changed
        inline_draws(data, options)
        edit = draw_edit(rng, data, kind, options[kind])
        mode = MODES[n % len(MODES)]
        arguments = mode_arguments(rng, mode, traced)
        if mode != "--check":
            # with --set, claims the edit made false are said, not refused (--check refuses
            # them): the copy leaves them out, which changes no number it prints
            for step in data.get("steps") or []:
                step.pop("expect", None)
        edited = os.path.join(SCRATCH, "edited_%d.yaml" % n)
        with open(edited, "w", encoding="utf-8") as f:
            f.write(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100000))
        got = run(*arguments, "--set", edit, path)
        expected = run(*arguments, edited)
        kinds.add(kind)
        modes.add(mode)
        if mode == "--check":
            got, expected = got[0], expected[0]
        elif expected[0] != 0:
            # the copy still refuses an answer the edit made wrong; --set says it and goes on
            copy_refused += 1
            continue
        else:
            printed += got[0] == 0
        if got != expected:
            failures.append("%s --set '%s' %s differs from the lesson edited by hand (%s)"
                            % (" ".join(arguments), edit, path, edited))
    print("%d edits: %d printed the same numbers, %d of --check exited the same way, %d not "
          "compared (the copy refuses an answer the edit made wrong); kinds: %s; modes: %s"
          % (50, printed, 50 - printed - copy_refused, copy_refused, " ".join(sorted(kinds)),
             " ".join(sorted(modes))))
    if printed < 30:
        failures.append("only %d edits printed numbers: the test compares refusals" % printed)
    if kinds != set(every):
        failures.append("kinds never edited: %s" % (set(every) - kinds))
    for failure in failures:
        print("FAIL " + failure)
    sys.exit(1 if failures else 0)


main()
