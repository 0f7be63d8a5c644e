#!/usr/bin/python3
"""Data files and numpy's draws against numpy itself (tests/check_numpy.sh runs this).

numpy writes .npy files in every dtype, byte order, memory order and header version attnstep
reads, and CSV files with and without a header; attnstep must read back exactly the same
numbers (its --json writes 17 significant digits, which parse back to the same double). Then
{random: numpy, seed: S} must draw bit for bit what np.random.seed(S); np.random.randn(...)
draws, for several seeds and shapes, across matrices in the draw order; and the path rules hold.
Usage: numpy_files.py ATTNSTEP SCRATCH_DIR"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    sys.exit("check_numpy: python3-numpy is missing; install it with "
             "`bash .ci/install-deps test` (CI does)")

ATTNSTEP, SCRATCH = sys.argv[1], sys.argv[2]
failures = []


def run(lesson_text, name="lesson.yaml", *options):
    path = os.path.join(SCRATCH, name)
    with open(path, "w") as f:
        f.write(lesson_text)
    result = subprocess.run([ATTNSTEP, "--json", *options, path], capture_output=True,
                            text=True, timeout=60)
    return result


def stages(lesson_text, label, *options):
    result = run(lesson_text, "lesson.yaml", *options)
    if result.returncode != 0:
        failures.append(f"{label}: attnstep exited {result.returncode}: {result.stderr.strip()}")
        return None
    return {(s["name"], s["head"]): np.array(s["values"], dtype=float)
            for s in json.loads(result.stdout)["stages"]}


def lesson(tokens, embeddings, extra=""):
    return (f"title: numpy check\ntokens: [{', '.join(tokens)}]\n"
            f"embeddings: {embeddings}\n{extra}")


def expect_equal(label, got, want, tolerance=0.0):
    if got is None:
        return
    if got.shape != want.shape:
        failures.append(f"{label}: shape {got.shape}, expected {want.shape}")
    elif tolerance == 0.0 and not np.array_equal(got, want):
        i = np.argwhere(got != want)[0]
        failures.append(f"{label}: at {tuple(i)} got {got[tuple(i)]!r}, numpy {want[tuple(i)]!r}")
    elif tolerance > 0.0 and np.max(np.abs(got - want)) > tolerance:
        failures.append(f"{label}: differs by {np.max(np.abs(got - want))!r}")


def names(n):
    return [f"t{i}" for i in range(n)]


def check_npy_round_trip():
    """Every dtype, byte order and memory order, each header version, 1-D and 2-D."""
    rng = np.random.RandomState(7)
    base = rng.randn(3, 4) * 10
    for code in ["<f8", ">f8", "<f4", ">f4", "<i8", ">i8", "<i4", ">i4"]:
        for order in ["C", "F"]:
            values = (np.round(base) if "i" in code else base).astype(code)
            values = np.asfortranarray(values) if order == "F" else np.ascontiguousarray(values)
            path = os.path.join(SCRATCH, "e.npy")
            np.save(path, values)
            with open(path, "rb") as f:
                header = f.read(128)
            if (b"'fortran_order': True" in header) != (order == "F"):
                failures.append(f"{code} {order}: numpy did not write the order asked for")
            got = stages(lesson(names(3), "{file: e.npy}"), f"npy {code} {order}")
            expect_equal(f"npy {code} order {order}", got and got[("input", None)],
                         values.astype(np.float64))
    for version in [(1, 0), (2, 0), (3, 0)]:
        path = os.path.join(SCRATCH, "v.npy")
        with open(path, "wb") as f:
            np.lib.format.write_array(f, base, version=version)
        got = stages(lesson(names(3), "{file: v.npy}"), f"npy version {version}")
        expect_equal(f"npy version {version}", got and got[("input", None)], base)
    np.save(os.path.join(SCRATCH, "one.npy"), base[0])   # 1-D: one token
    got = stages(lesson(["solo"], "{file: one.npy}"), "npy 1-D")
    expect_equal("npy 1-D", got and got[("input", None)], base[:1])


def check_csv_round_trip():
    rng = np.random.RandomState(8)
    values = rng.randn(4, 2)
    for header in ["", "x,y"]:
        np.savetxt(os.path.join(SCRATCH, "e.csv"), values, delimiter=",", fmt="%.17g",
                   header=header, comments="")
        got = stages(lesson(names(4), "{file: e.csv}"), f"csv header '{header}'")
        expect_equal(f"csv with header '{header}'", got and got[("input", None)], values)


def check_cross_attention_rows():
    """Embeddings from a file hold the tokens' rows, then the source tokens' rows."""
    values = np.random.RandomState(9).randn(5, 2)
    np.save(os.path.join(SCRATCH, "both.npy"), values)
    got = stages(lesson(["a", "b"], "{file: both.npy}", "source: [x, y, z]\n"), "cross")
    expect_equal("cross input", got and got[("input", None)], values[:2])
    expect_equal("cross source_input", got and got[("source_input", None)], values[2:])


def check_numpy_embeddings():
    """Several seeds and shapes, including odd counts (the cached second normal)."""
    for seed in [0, 1, 42, 2024, 4294967295]:
        for n, d in [(1, 1), (3, 4), (5, 3), (7, 16)]:
            np.random.seed(seed)
            want = np.random.randn(n, d)
            got = stages(lesson(names(n), f"{{random: numpy, seed: {seed}}}",
                                f"d_model: {d}\n"), f"seed {seed} ({n}, {d})")
            expect_equal(f"randn seed {seed} shape ({n}, {d})", got and got[("input", None)],
                         want)


def check_numpy_matrices():
    """W_Q, W_K, W_V continue one stream in the draw order; identity embeddings (from a file)
    make Q, K and V the drawn matrices themselves, bit for bit."""
    d = 3   # 9 values a matrix: odd, so a cached normal carries over into the next matrix
    np.save(os.path.join(SCRATCH, "eye.npy"), np.eye(d))
    drawn = "{random: numpy, seed: 11}"
    matrices = "".join(f"{name}: {drawn}\n" for name in ["W_Q", "W_K", "W_V", "W_O"])
    for order in [None, ["W_V", "W_O", "W_K", "W_Q"]]:
        np.random.seed(11)
        draws = [np.random.randn(d, d) for _ in range(4)]
        by_name = dict(zip(order or ["W_Q", "W_K", "W_V", "W_O"], draws))
        extra = matrices + (f"draw_order: [{', '.join(order)}]\n" if order else "")
        got = stages(lesson(names(d), "{file: eye.npy}", extra), f"draw order {order}")
        for stage, name in [("Q", "W_Q"), ("K", "W_K"), ("V", "W_V")]:
            expect_equal(f"{name} in draw order {order}", got and got[(stage, None)],
                         by_name[name])
    # embeddings first, then W_Q, from one seed, as a numpy program would draw them
    np.random.seed(5)
    x, w_q = np.random.randn(2, 3), np.random.randn(3, 3)
    got = stages(lesson(["a", "b"], "{random: numpy, seed: 5, scale: 0.5}",
                        "d_model: 3\nW_Q: {random: numpy, seed: 5}\n"), "embeddings then W_Q")
    expect_equal("scaled embeddings", got and got[("input", None)], 0.5 * x)
    expect_equal("Q from the second draw", got and got[("Q", None)], (0.5 * x) @ w_q, 1e-12)


def check_seed42_lesson():
    """lessons/numpy_seed42.yaml gives what the tutorial's program computes: seed 42,
    randn(3, 4), Q = K = V = the embeddings, softmax(Q K^T / sqrt(d_k)), then weights V."""
    np.random.seed(42)
    x = np.random.randn(3, 4)
    scores = x @ x.T / np.sqrt(4)
    weights = np.exp(scores) / np.sum(np.exp(scores), axis=-1, keepdims=True)
    result = subprocess.run([ATTNSTEP, "--json", "lessons/numpy_seed42.yaml"],
                            capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        failures.append(f"numpy_seed42.yaml: exit {result.returncode}: {result.stderr}")
        return
    got = {(s["name"], s["head"]): np.array(s["values"], dtype=float)
           for s in json.loads(result.stdout)["stages"]}
    expect_equal("seed 42 lesson: input", got[("input", None)], x)
    expect_equal("seed 42 lesson: weights", got[("weights", 1)], weights, 1e-12)
    expect_equal("seed 42 lesson: output", got[("output", None)], weights @ x, 1e-12)


def check_paths():
    """Links that lead out are refused unless --allow-paths; so is a FIFO (without blocking)
    and a file over the size limit (without reading it)."""
    outside = os.path.join(SCRATCH, "outside")
    inside = os.path.join(SCRATCH, "inside")
    os.makedirs(outside, exist_ok=True)
    os.makedirs(inside, exist_ok=True)
    np.save(os.path.join(outside, "e.npy"), np.ones((2, 2)))
    link = os.path.join(inside, "e.npy")
    if not os.path.islink(link):
        os.symlink(os.path.join(outside, "e.npy"), link)
    text = lesson(["a", "b"], "{file: e.npy}")
    refused = run(text, "inside/l.yaml")
    if refused.returncode != 65 or "symbolic link leads out" not in refused.stderr:
        failures.append(f"symlink out: exit {refused.returncode}, {refused.stderr.strip()}")
    allowed = run(text, "inside/l.yaml", "--allow-paths")
    if allowed.returncode != 0:
        failures.append(f"--allow-paths symlink: exit {allowed.returncode}, {allowed.stderr}")
    absolute = lesson(["a", "b"], "{file: " + os.path.join(outside, "e.npy") + "}")
    allowed = run(absolute, "inside/abs.yaml", "--allow-paths")
    if allowed.returncode != 0:
        failures.append(f"--allow-paths absolute: exit {allowed.returncode}, {allowed.stderr}")
    fifo = os.path.join(SCRATCH, "fifo.npy")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    blocked = run(lesson(["a"], "{file: fifo.npy}"))
    if blocked.returncode != 65 or "not a regular file" not in blocked.stderr:
        failures.append(f"fifo: exit {blocked.returncode}, {blocked.stderr.strip()}")
    with open(os.path.join(SCRATCH, "big.npy"), "wb") as f:
        f.truncate(300 << 20)   # sparse: nothing is written
    big = run(lesson(["a"], "{file: big.npy}"))
    if big.returncode != 65 or "the limit for a data file is 256 MiB" not in big.stderr:
        failures.append(f"big file: exit {big.returncode}, {big.stderr.strip()}")


for check in [check_npy_round_trip, check_csv_round_trip, check_cross_attention_rows,
              check_numpy_embeddings, check_numpy_matrices, check_seed42_lesson, check_paths]:
    check()
for failure in failures:
    print("FAIL", failure)
print(f"numpy: {len(failures)} failures")
sys.exit(1 if failures else 0)
