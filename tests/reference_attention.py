#!/usr/bin/python3
"""An independent implementation of attnstep's attention, to check `attnstep --json` against.

Reads a lesson with PyYAML (not attnstep's libyaml loader), computes every stage with plain
Python loops straight from the formulas in issue 2 / README, runs `attnstep --json` on the same
file and compares every number of every stage within 1e-12 (relative to the value's size).
Every dot product is the textbook sum as attnstep defines it: fused multiply-add in k order
(each step rounded once, computed exactly with fractions), so the products agree to the bit; the
tolerance stays because math.exp and attnstep's exponential may differ in the last bit. A lesson
of more than LARGE_LESSON multiplications (real_size.yaml, attention_cost.yaml) takes numpy's
float64 products instead, held to the tolerance rather than to the bit.
Usage: reference_attention.py ATTNSTEP LESSON...   Exit status 0 when all agree.
"""
import fractions
import json
import cmath
import math
import os
import subprocess
import sys

import yaml

TOLERANCE = 1e-12
MASK64 = (1 << 64) - 1


class Generator:
    """The lesson format's documented random generator (lessons/README.md), written again here
    from its definition: splitmix64 seeding xoshiro256**, 53-bit uniforms, Box–Muller normals
    with a logarithm and cosine built from + − × ÷ and sqrt only, and xavier uniforms."""

    def __init__(self, seed):
        self.state = []
        x = seed & MASK64
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & MASK64
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
            self.state.append(z ^ (z >> 31))

    def next(self):
        s = self.state
        rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & MASK64
        result = (rotl((s[1] * 5) & MASK64, 7) * 9) & MASK64
        t = (s[1] << 17) & MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53

    def normal(self):
        u1 = 1.0 - self.uniform()
        u2 = self.uniform()
        return math.sqrt(-2.0 * portable_log(u1)) * portable_cos_turns(u2)


def portable_log(x):
    e = 0
    while x < 0.70710678118654752440:
        x *= 2.0
        e -= 1
    t = (x - 1.0) / (x + 1.0)
    t2, term, total = t * t, t, 0.0
    for k in range(1, 26, 2):
        total += term / k
        term *= t2
    ln2_hi, ln2_lo = float.fromhex("0x1.62e42fee00000p-1"), float.fromhex("0x1.a39ef35793c76p-33")
    return 2.0 * total + e * ln2_hi + e * ln2_lo


def series(x, first, start):
    x2, term, total = x * x, first, first
    for k in range(start, start + 21, 2):
        term *= -x2 / ((k - 1) * k)
        total += term
    return total


def portable_cos_turns(u):
    octant = int(u * 8.0)
    k = (octant + 1) // 2
    x = (u - k * 0.25) * 6.28318530717958647692
    cos_x, sin_x = series(x, 1.0, 2), series(x, x, 3)
    return (cos_x, -sin_x, -cos_x, sin_x)[k & 3]


def random_matrix(spec, rows, cols, d_model):
    generator = Generator(int(spec["seed"]))
    scale = number(spec.get("scale", "1"))
    a = math.sqrt(3.0 / d_model)
    values = []
    for _ in range(rows * cols):
        if spec["random"] == "xavier":
            x = (2.0 * generator.uniform() - 1.0) * a
        else:
            x = generator.normal()
        values.append(x * scale)
    return [values[r * cols:(r + 1) * cols] for r in range(rows)]


def number(text):
    return float(text)


def identity(d):
    return [[1.0 if i == j else 0.0 for j in range(d)] for i in range(d)]


# A lesson at real size (lessons/real_size.yaml: 34.6 million multiplications) would take
# minutes of exact fused sums here, so above this many multiplications the products are numpy's
# float64 ones (another summation order: at d_model 512 they differ from the fused k-order sum
# by about 1e-14, well inside TOLERANCE), and everything else stays as below.
LARGE_LESSON = 1_000_000
products = {"numpy": None}   # numpy, while a large lesson is computed


def dot(xs, ys):
    """sum = fma(x, y, sum) over the pairs in order: x·y + sum rounded once (Fraction is exact
    and its conversion to float correctly rounded)."""
    if products["numpy"]:
        return float(products["numpy"].dot(list(xs), list(ys)))
    total = 0.0
    for x, y in zip(xs, ys):
        total = float(fractions.Fraction(x) * fractions.Fraction(y) + fractions.Fraction(total))
    return total


def matmul(a, b):
    if products["numpy"]:
        np = products["numpy"]
        return (np.array(a, dtype=np.float64) @ np.array(b, dtype=np.float64)).tolist()
    cols = len(b[0])
    return [[dot(row, (b[k][j] for k in range(len(b)))) for j in range(cols)] for row in a]


def positional(positions, d):
    pe = []
    for pos in range(positions):
        row = []
        for j in range(d):
            angle = pos / math.pow(10000.0, (j - j % 2) / d)
            row.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
        pe.append(row)
    return pe


def rotate(matrix, d_k, base):
    """RoPE written with complex numbers: within each head, the pair (2p, 2p+1) of row pos is
    the complex number x + iy, multiplied by e^(i·pos·base^(−2p/d_k))."""
    out = []
    for pos, row in enumerate(matrix):
        new = list(row)
        for start in range(0, len(row), d_k):
            for p in range(d_k // 2):
                c = 2 * p + start
                z = complex(row[c], row[c + 1]) * cmath.exp(1j * pos * base ** (-2 * p / d_k))
                new[c], new[c + 1] = z.real, z.imag
        out.append(new)
    return out


def alibi_slopes(heads):
    """The slopes by the rule of the ALiBi paper's code (Press et al., get_slopes): for n a power
    of two the geometric sequence 2^(−8/n), 2^(−16/n), …, 2^(−8); otherwise that of the power of
    two below, then every other slope of twice as many. (Each slope is written 2^(−8k/n) rather
    than the paper's start · start^i, which can differ from it in the last bit.)"""
    def power_of_two(n):
        return [2 ** (-8 * k / n) for k in range(1, n + 1)]
    if math.log2(heads).is_integer():
        return power_of_two(heads)
    closest = 2 ** math.floor(math.log2(heads))
    return power_of_two(closest) + alibi_slopes(2 * closest)[0::2][:heads - closest]


def online_softmax(masked, tile):
    """FlashAttention's recurrence over tiles of keys, from its definition: after tile t of a
    row, m_t = max(m_{t-1}, the tile's visible scores) and l_t = l_{t-1}·exp(m_{t-1} − m_t) +
    Σ exp(s_j − m_t) (a row that has seen only hidden keys keeps m = −∞, l = 0). Returns the
    running maxima, the running sums, and the weights exp(s_j − m_T) / l_T."""
    maxima, sums, weights = [], [], []
    for row in masked:
        m, l, ms, ls = -math.inf, 0.0, [], []
        for start in range(0, len(row), tile):
            part = [s for s in row[start:start + tile] if s != -math.inf]
            new = max([m] + part)
            if new != -math.inf:
                l = l * math.exp(m - new) + sum(math.exp(s - new) for s in part)
            m = new
            ms.append(m)
            ls.append(l)
        maxima.append(ms)
        sums.append(ls)
        weights.append([math.exp(s - m) / l if s != -math.inf else 0.0 for s in row])
    return maxima, sums, weights


def as_tokens(value):
    return value.split(" ") if isinstance(value, str) else list(value)


BIASES = ("b_Q", "b_K", "b_V", "b_O")
DRAWN = ("embeddings", "W_Q", "W_K", "W_V", "W_O") + BIASES


def kv_width(lesson, d):
    """Columns of W_K and W_V (and numbers of b_K and b_V): kv_heads · d_k."""
    heads = int(lesson.get("heads", "1"))
    return d // heads * int(lesson.get("kv_heads", heads))


def drawn_shape(lesson, name, d, position_rows):
    """The shape numpy's randn draws a matrix or bias in (a bias as randn(cols))."""
    cols = kv_width(lesson, d) if name[-1] in "KV" and name != "embeddings" else d
    if name == "embeddings":
        return (position_rows, d)
    return (cols,) if name in BIASES else (d, cols)


def given_matrices(lesson, folder, position_rows):
    """The matrices a lesson gives whole: {file: NAME} read with numpy, and {random: numpy}
    drawn by numpy itself, one RandomState a seed, in the draw order; d_model from the lesson or
    the embeddings' file. numpy is imported only for lessons that use these forms."""
    specs = {name: lesson.get(name) for name in DRAWN}
    specs = {name: spec for name, spec in specs.items()
             if isinstance(spec, dict) and (spec.get("random") == "numpy" or "file" in spec)}
    if not specs:
        return {}
    import numpy as np
    given, streams = {}, {}
    for name, spec in specs.items():
        if "file" in spec:
            path = os.path.join(folder, spec["file"])
            values = np.load(path) if path.endswith(".npy") else np.genfromtxt(
                path, delimiter=",", dtype=float)
            values = np.asarray(values, dtype=np.float64)
            if path.endswith(".csv") and np.isnan(values[0]).any():
                values = values[1:]   # the CSV's header row
            given[name] = values.reshape(-1, values.shape[-1]).tolist()
    if "d_model" in lesson:
        d = int(lesson["d_model"])
    elif "embeddings" in given:
        d = len(given["embeddings"][0])
    else:   # the token → vector mapping
        d = len(next(iter(lesson["embeddings"].values())))
    for name in lesson.get("draw_order", DRAWN):
        spec = specs.get(name)
        if spec and spec.get("random") == "numpy":
            seed = int(spec.get("seed", "0"))
            stream = streams.setdefault(seed, np.random.RandomState(seed))
            shape = drawn_shape(lesson, name, d, position_rows)
            drawn = stream.randn(*shape) * float(spec.get("scale", "1"))
            given[name] = drawn.reshape(-1, shape[-1]).tolist()
    return given


def load(path):
    # BaseLoader keeps every scalar a string, as attnstep does: "no" stays a token, not False.
    with open(path, encoding="utf-8") as f:
        lesson = yaml.load(f, Loader=yaml.BaseLoader)
    tokens = as_tokens(lesson["tokens"])
    source = as_tokens(lesson["source"]) if "source" in lesson else None
    embeddings = lesson["embeddings"]
    given = given_matrices(lesson, os.path.dirname(path), len(tokens) + len(source or []))
    positions = given.get("embeddings")   # embeddings given whole: one row a position
    if positions:
        d = len(positions[0])
        vectors = None
    elif "random" in embeddings:
        d = int(lesson["d_model"])
        distinct = list(dict.fromkeys(tokens + (source or [])))
        rows = random_matrix(embeddings, len(distinct), d, d)
        vectors = dict(zip(distinct, rows))
    else:
        vectors = {t: [number(x) for x in v] for t, v in embeddings.items()}
        d = len(next(iter(vectors.values())))
    heads = int(lesson.get("heads", "1"))
    kv_heads = int(lesson.get("kv_heads", heads))
    weights = {}
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        cols = d // heads * kv_heads if name in ("W_K", "W_V") else d
        spec = lesson.get(name, "identity")
        if name in given:
            weights[name] = given[name]
        elif spec == "identity":
            weights[name] = identity(d)
        elif isinstance(spec, dict):
            weights[name] = random_matrix(spec, d, cols, d)
        else:
            weights[name] = [[number(x) for x in row] for row in spec]
    biases = {}
    for name in BIASES:
        cols = kv_width(lesson, d) if name in ("b_K", "b_V") else d
        spec = lesson.get(name)
        if name in given:   # a file or numpy's draws: one row, or a column (cols, 1)
            biases[name] = [x for row in given[name] for x in row]
        elif isinstance(spec, dict):
            biases[name] = random_matrix(spec, 1, cols, d)[0]
        elif spec is not None:
            biases[name] = [number(x) for x in spec]
    norm = lesson.get("norm")
    if norm is not None:   # the norm's gain (ones unless given) and bias (zeros; none for rms)
        biases["gain"] = [number(x) for x in norm.get("gain", ["1"] * d)]
        if norm.get("kind", "layer") == "layer":
            biases["bias"] = [number(x) for x in norm.get("bias", ["0"] * d)]
    return {
        "title": lesson["title"], "tokens": tokens, "random_embeddings": "random" in embeddings,
        "source": source, "d": d, "rows": positions,
        "heads": heads, "kv_heads": kv_heads, "kv_heads_given": "kv_heads" in lesson,
        "vectors": vectors, "weights": weights, "biases": biases,
        "mask": lesson.get("mask", "none"),
        "positional": lesson.get("positional", "none") == "sinusoidal",
        "rope": lesson.get("positional", "none") == "rope",
        "rope_base": number(lesson.get("rope_base", "10000")),
        "alibi": lesson.get("bias", "none") == "alibi",
        "scale": lesson.get("scale", "true") == "true",
        "tile": int(lesson["tile"]) if lesson.get("softmax") == "online" else None,
        "decode": lesson.get("decode", "false") == "true",
        "norm": None if norm is None else {"kind": norm.get("kind", "layer"),
                                           "place": norm.get("place", "pre"),
                                           "eps": number(norm.get("eps", "1e-5"))},
        "residual": lesson.get("residual", "false") == "true",
        "dropout": None if "dropout" not in lesson else {
            "p": number(lesson["dropout"]["p"]), "seed": int(lesson["dropout"]["seed"])},
        "contributions": lesson.get("contributions", "false") == "true",
    }


def dropout_keep(dropout, heads, n, m):
    """Dropout's keep mask as lessons/README.md documents it: row i of head h (from 0 here) draws
    its m keys in order from the generator seeded with seed + 2^32·(h·n + i) (modulo 2^64); kept
    when the draw is at least p. keep[h][i][j] is 1.0 or 0.0."""
    keep = []
    for h in range(heads):
        rows = []
        for i in range(n):
            generator = Generator((dropout["seed"] + ((h * n + i) << 32)) & MASK64)
            rows.append([1.0 if generator.uniform() >= dropout["p"] else 0.0 for _ in range(m)])
        keep.append(rows)
    return keep


def normalise(rows, norm, gain, bias):
    """Layer norm (x − mean) / √(biased variance + eps) · gain + bias, or RMS norm
    x / √(mean(x²) + eps) · gain, of each row."""
    out = []
    for row in rows:
        d = len(row)
        mean = sum(row) / d if norm["kind"] == "layer" else 0.0
        spread = sum((x - mean) ** 2 for x in row) / d
        root = math.sqrt(spread + norm["eps"])
        out.append([(x - mean) / root * g + (bias[c] if bias else 0.0)
                    for c, (x, g) in enumerate(zip(row, gain))])
    return out


def compute(lesson):
    """Every stage, as {(name, head): matrix}, with head None for whole-layer stages."""
    d, heads = lesson["d"], lesson["heads"]
    d_k = d // heads
    tokens, source = lesson["tokens"], lesson["source"]
    keys = source if source else tokens
    n, m = len(tokens), len(keys)
    large = (2 * n + 2 * m) * d * d + 2 * n * m * d > LARGE_LESSON
    if large:
        import numpy
    products["numpy"] = numpy if large else None
    pe = positional(max(n, m), d) if lesson["positional"] else [[0.0] * d] * max(n, m)
    rows = lesson["rows"]   # embeddings given whole, one row a position (tokens, then source)
    def vector(i, t, offset):
        return rows[offset + i] if rows else lesson["vectors"][t]
    x = [[a + b for a, b in zip(vector(i, t, 0), pe[i])] for i, t in enumerate(tokens)]
    xs = [[a + b for a, b in zip(vector(i, t, n if source else 0), pe[i])]
          for i, t in enumerate(keys)]
    w, b = lesson["weights"], lesson["biases"]

    def project(rows, matrix, bias):
        """rows · W, each cell the fused dot product, then + the bias (one rounded addition)."""
        product = matmul(rows, w[matrix])
        return product if bias not in b else [[x + y for x, y in zip(row, b[bias])]
                                               for row in product]
    stages = {}
    if source:
        stages[("source_input", None)] = xs
    else:
        xs = x
    stages[("input", None)] = x
    norm = lesson["norm"]
    if norm and norm["place"] == "pre":
        xs = stages[("normed", None)] = normalise(x, norm, b["gain"], b.get("bias"))
        attend = xs
    else:
        attend = x
    q, k, v = project(attend, "W_Q", "b_Q"), project(xs, "W_K", "b_K"), project(xs, "W_V", "b_V")
    stages[("Q", None)], stages[("K", None)], stages[("V", None)] = q, k, v
    if lesson["rope"]:
        q, k = rotate(q, d_k, lesson["rope_base"]), rotate(k, d_k, lesson["rope_base"])
        stages[("Q_rotated", None)], stages[("K_rotated", None)] = q, k
    slopes = alibi_slopes(heads) if lesson["alibi"] else None
    mask = lesson["mask"]

    def visible(i, j):
        if mask == "none":
            return True
        if mask == "causal":
            return j <= i
        if isinstance(mask, dict):
            return i - int(mask["window"]) < j <= i
        return mask[i][j] == "1"

    concat = [[0.0] * d for _ in range(n)]
    per_group = heads // lesson["kv_heads"]
    dropout = lesson["dropout"]
    keep = dropout_keep(dropout, heads, n, m) if dropout else None
    for h in range(heads):
        cols = range(h * d_k, (h + 1) * d_k)
        group = h // per_group  # repeat_kv: consecutive query heads share a key/value head
        kv_cols = range(group * d_k, (group + 1) * d_k)
        scores = [[dot((q[i][c] for c in cols), (k[j][e] for e in kv_cols)) for j in range(m)]
                  for i in range(n)]
        scaled = [[s / math.sqrt(d_k) if lesson["scale"] else s for s in row] for row in scores]
        unmasked = scaled
        if slopes:
            unmasked = [[scaled[i][j] - slopes[h] * abs(i - j) for j in range(m)]
                        for i in range(n)]
            stages[("biased", h + 1)] = unmasked
        masked = [[unmasked[i][j] if visible(i, j) else -math.inf for j in range(m)]
                  for i in range(n)]
        weights = []
        for row in masked:
            top = max(row)
            e = [math.exp(s - top) if s != -math.inf else 0.0 for s in row]
            total = sum(e)
            weights.append([x / total for x in e])
        if lesson["tile"]:
            maxima, sums, weights = online_softmax(masked, lesson["tile"])
            stages[("running_max", h + 1)], stages[("running_sum", h + 1)] = maxima, sums
        attended = weights
        if keep:   # training mode: weights × keep / (1 − p), what context then reads
            attended = stages[("dropped", h + 1)] = [
                [weights[i][j] * keep[h][i][j] / (1.0 - dropout["p"]) for j in range(m)]
                for i in range(n)]
            stages[("row_sums", h + 1)] = [[sum(row)] for row in attended]
        context = [[dot(attended[i], (v[j][c] for j in range(m))) for c in kv_cols]
                   for i in range(n)]
        if lesson["contributions"]:   # what head h adds, and what each key sends through it
            w_o = w["W_O"][h * d_k:(h + 1) * d_k]
            stages[("head_output", h + 1)] = matmul(context, w_o)
            sent = matmul([[v[j][c] for c in kv_cols] for j in range(m)], w_o)
            lengths = [math.sqrt(dot(row, row)) for row in sent]
            stages[("weighted_norms", h + 1)] = [[attended[i][j] * lengths[j] for j in range(m)]
                                                 for i in range(n)]
        for i in range(n):
            concat[i][h * d_k:(h + 1) * d_k] = context[i]
        for name, matrix in (("scores", scores), ("scaled", scaled), ("masked", masked),
                             ("weights", weights), ("context", context)):
            stages[(name, h + 1)] = matrix
    stages[("concat", None)] = concat
    output = stages[("output", None)] = project(concat, "W_O", "b_O")
    if lesson["residual"]:
        stages[("residual", None)] = [[a + o for a, o in zip(xr, orow)]
                                      for xr, orow in zip(x, output)]
    if norm and norm["place"] == "post":
        stages[("normed", None)] = normalise(stages[("residual", None)], norm, b["gain"],
                                             b.get("bias"))
    return stages


def close(expected, actual, tolerance=TOLERANCE):
    if expected == -math.inf:
        return actual is None
    if actual is None:
        return False
    return abs(expected - actual) <= tolerance * max(1.0, abs(expected), abs(actual))


def check_options(lesson, got):
    """The top-level fields that say how the stages were made, where the lesson sets them."""
    mask = lesson["mask"]
    want = {
        "positional": "rope" if lesson["rope"] else "sinusoidal" if lesson["positional"] else None,
        "rope_base": lesson["rope_base"] if lesson["rope"] else None,
        "bias": "alibi" if lesson["alibi"] else None,
        "window": int(mask["window"]) if isinstance(mask, dict) else None,
        "kv_heads": lesson["kv_heads"] if lesson["kv_heads_given"] else None,
        "softmax": "online" if lesson["tile"] else None,
        "tile": lesson["tile"],
        # decoding changes the order of the work, not a number: the stages are the causal ones
        "decode": True if lesson["decode"] else None,
        # the biases the lesson gives, exactly as read (they are inputs, not computed)
        "biases": lesson["biases"] or None,
        "norm": lesson["norm"],
        "residual": True if lesson["residual"] else None,
        "dropout": lesson["dropout"],
        "contributions": True if lesson["contributions"] else None,
    }
    problems = [f"top-level {key}: expected {value!r}, got {got.get(key)!r}"
                for key, value in want.items() if got.get(key) != value]
    # the trace's own measure of how far the recurrence is from the ordinary softmax
    difference = got.get("online_difference")
    if lesson["tile"] and not (difference is not None and 0 <= difference <= TOLERANCE):
        problems.append(f"online_difference {difference!r} is not within {TOLERANCE}")
    return problems


def check(program, path):
    lesson = load(path)
    expected = compute(lesson)
    run = subprocess.run([program, "--json", path], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"{path}: attnstep --json exited {run.returncode}: {run.stderr.strip()}")
        return False
    got = json.loads(run.stdout)
    problems = []
    if got["tokens"] != lesson["tokens"]:
        problems.append(f"tokens {got['tokens']} != {lesson['tokens']}")
    if (got["d_model"], got["heads"], got["d_k"]) != (lesson["d"], lesson["heads"],
                                                      lesson["d"] // lesson["heads"]):
        problems.append("d_model/heads/d_k differ")
    # The products before the softmax are fused sums on both sides: where the inputs agree to the
    # bit (they may not with positional encoding: sin, cos and pow are libm's), so must they.
    inputs = {(st["name"], st["head"]): st["values"] for st in got["stages"]
              if st["name"] in ("input", "source_input", "normed")}
    same_inputs = all(expected.get(key) == values for key, values in inputs.items())
    before_softmax = ("Q", "K", "V", "scores", "scaled", "masked")
    seen = set()
    for stage in got["stages"]:
        key = (stage["name"], stage["head"])
        if stage["name"] == "loss" or stage["name"].startswith("d_"):
            continue   # the loss and its gradients: check_torch_gradients holds them to autograd
        seen.add(key)
        if key not in expected:
            problems.append(f"unexpected stage {key}")
            continue
        want = expected[key]
        # Random embeddings are the generator's numbers themselves: they must match exactly.
        exact = (key[0] == "input" and lesson["random_embeddings"] and not lesson["positional"]
                 or key[0] in before_softmax and same_inputs and not products["numpy"])
        for i, row in enumerate(want):
            for j, value in enumerate(row):
                actual = stage["values"][i][j]
                if not close(value, actual, 0.0 if exact else TOLERANCE):
                    problems.append(f"{key[0]}[{i},{j}] head {key[1]}: expected {value!r}, "
                                    f"got {actual!r}")
                    break
            else:
                continue
            break
    for key in expected:
        if key not in seen:
            problems.append(f"missing stage {key}")
    problems += check_options(lesson, got)
    for p in problems:
        print(f"{path}: {p}")
    return not problems


def main():
    program, paths = sys.argv[1], sys.argv[2:]
    results = [check(program, p) for p in paths]
    print(f"reference check: {sum(results)} of {len(results)} lessons agree within {TOLERANCE}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
