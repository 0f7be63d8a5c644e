#!/usr/bin/python3
"""The same attention work in numpy (OpenBLAS) or PyTorch's nn.MultiheadAttention, for
tests/bench/run.sh: `compare.py numpy|torch N D_MODEL HEADS REPEATS [THREADS]` prints one `name=value` line
per figure: best and median of the runs, and CPU time over wall time (how many cores it used).
numpy runs on 1 and 2 threads; PyTorch on THREADS (default 1: torch_best_s…; otherwise
torch_threads_THREADS_best_s…), meant to run in its own process with OPENBLAS_NUM_THREADS and
OMP_NUM_THREADS set to it, since its BLAS is the same OpenBLAS as numpy's and would otherwise
use every core."""
import math
import os
import sys
import time


def timed(function, repeats):
    """Best and median wall time of the runs, and CPU time over wall time for all of them."""
    times = []
    cpu_start, wall_start = time.process_time(), time.perf_counter()
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    cores = (time.process_time() - cpu_start) / (time.perf_counter() - wall_start)
    times.sort()
    return times[0], times[len(times) // 2], cores


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
            best, median, cores = timed(attention, repeats)
        info = [f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}"
                for i in threadpool_info()]
        print(f"numpy_blas={'; '.join(info)}")
    else:
        best, median, cores = timed(attention, repeats)
    print(f"numpy_version={np.__version__}")
    print(f"numpy_threads_{threads}_best_s={best:.6f}")
    print(f"numpy_threads_{threads}_median_s={median:.6f}")
    print(f"numpy_threads_{threads}_cores={cores:.2f}")


def bench_torch(n, d, heads, repeats, threads):
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(42)
    mha = torch.nn.MultiheadAttention(d, heads, bias=False, dtype=torch.float64)
    x = torch.randn(n, 1, d, dtype=torch.float64)

    def attention():
        with torch.no_grad():
            return mha(x, x, x, need_weights=True, average_attn_weights=False)

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None:
        with threadpool_limits(limits=threads):
            best, median, cores = timed(attention, repeats)
    else:
        best, median, cores = timed(attention, repeats)
    name = "torch" if threads == 1 else f"torch_threads_{threads}"
    print(f"torch_version={torch.__version__}")
    print(f"{name}_best_s={best:.6f}")
    print(f"{name}_median_s={median:.6f}")
    print(f"{name}_cores={cores:.2f}")
    print(f"torch_env=OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')} "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")


def main():
    which = sys.argv[1]
    n, d, heads, repeats = (int(a) for a in sys.argv[2:6])
    threads = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    try:
        if which == "numpy":
            for threads in (1, 2):
                bench_numpy(n, d, heads, repeats, threads)
        else:
            bench_torch(n, d, heads, repeats, threads)
    except ImportError as error:
        print(f"{which}_missing={error}")


if __name__ == "__main__":
    main()
