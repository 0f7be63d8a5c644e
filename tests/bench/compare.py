#!/usr/bin/python3
"""The same attention work in numpy (OpenBLAS) and PyTorch's nn.MultiheadAttention, for
tests/bench/run.sh: prints one `name=value` line per figure (best and median of REPEATS runs)."""
import math
import sys
import time


def timed(function, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[0], times[len(times) // 2]


def bench_numpy(n, d, heads, repeats, threads):
    import numpy as np
    d_k = d // heads
    rng = np.random.default_rng(42)
    x = rng.standard_normal((n, d))
    w_q, w_k, w_v, w_o = (rng.uniform(-1, 1, (d, d)) * math.sqrt(3.0 / d) for _ in range(4))

    def attention():
        # every product a 2-D matrix product, so each one really is a BLAS dgemm call
        q, k, v = x @ w_q, x @ w_k, x @ w_v
        concat = np.empty((n, d))
        for h in range(heads):
            cols = slice(h * d_k, (h + 1) * d_k)
            scores = q[:, cols] @ k[:, cols].T
            scaled = scores / math.sqrt(d_k)
            # stable softmax: subtract the row max before exp
            e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
            weights = e / e.sum(axis=1, keepdims=True)
            concat[:, cols] = weights @ v[:, cols]
        return concat @ w_o

    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None:
        with threadpool_limits(limits=threads):
            best, median = timed(attention, repeats)
        info = [f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}"
                for i in threadpool_info()]
        print(f"numpy_blas={'; '.join(info)}")
    else:
        best, median = timed(attention, repeats)
    print(f"numpy_version={np.__version__}")
    print(f"numpy_threads_{threads}_best_s={best:.6f}")
    print(f"numpy_threads_{threads}_median_s={median:.6f}")


def bench_torch(n, d, heads, repeats):
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(42)
    mha = torch.nn.MultiheadAttention(d, heads, bias=False, dtype=torch.float64)
    x = torch.randn(n, 1, d, dtype=torch.float64)

    def attention():
        with torch.no_grad():
            return mha(x, x, x, need_weights=True, average_attn_weights=False)

    best, median = timed(attention, repeats)
    print(f"torch_version={torch.__version__}")
    print(f"torch_best_s={best:.6f}")
    print(f"torch_median_s={median:.6f}")


def main():
    n, d, heads, repeats = (int(a) for a in sys.argv[1:5])
    for name, run in (("numpy", lambda: [bench_numpy(n, d, heads, repeats, t) for t in (1, 2)]),
                      ("torch", lambda: bench_torch(n, d, heads, repeats))):
        try:
            run()
        except ImportError as error:
            print(f"{name}_missing={error}")


if __name__ == "__main__":
    main()
