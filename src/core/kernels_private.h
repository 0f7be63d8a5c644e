/* What the kernels' own files share, and nothing else includes: which vector code this build
 * and this processor have, and the one way a kernel's work is split across threads. */
#ifndef ATTNSTEP_KERNELS_PRIVATE_H
#define ATTNSTEP_KERNELS_PRIVATE_H

#include <stddef.h>
#include "kernels.h"

/* Every multiply-add that is meant to be fused is written as one (fma or an intrinsic); no other
 * a·b + c may be fused by the compiler, or the vector code would differ from the portable code
 * (GCC's -std=c11 already keeps contraction off; Clang needs telling). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* The vector code is compiled for x86-64's AVX2 (with FMA) and AVX-512 by target attributes and
 * chosen at run time (__builtin_cpu_supports): -O2 alone assumes only SSE2. Elsewhere, or on a
 * processor without them, the portable code runs: the same arithmetic, one fma() at a time. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute) \
    && !defined(KERNELS_PORTABLE_ONLY) /* -DKERNELS_PORTABLE_ONLY: build as for another processor */
#if __has_attribute(target)
#define KERNELS_X86
#endif
#endif
#ifdef KERNELS_X86
#include <immintrin.h>
#define AVX2 __attribute__((target("avx2")))
#define AVX2_FMA __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx512f")))
#else
#define AVX2
#endif

/* AArch64 always has NEON (Advanced SIMD, with a fused multiply-add on two doubles): its code
 * needs no target attributes and no run-time check; config->portable still chooses the
 * portable code. */
#if defined(__aarch64__) && defined(__GNUC__) && !defined(KERNELS_PORTABLE_ONLY)
#define KERNELS_NEON
#include <arm_neon.h>
#endif

/* Which code computes the products and the softmax: the results are the same bits on every one. */
typedef enum { PATH_PORTABLE, PATH_AVX2_FMA, PATH_AVX512, PATH_NEON } kernels_path;

kernels_path kernels_path_of(const kernels_config *config);

/* Runs work(job, chunk, scratch) for every chunk on the calling thread (whose scratch is given)
 * and, when the job is worth it (amount ≥ a threshold of multiply-adds or the like), on up to
 * kernels_threads(config) − 1 helpers, each with scratch_bytes of its own. Every chunk is
 * computed the same way whichever thread takes it, so results do not depend on the split. */
void kernels_run_shared(void (*work)(void *, int, double *), void *job, int chunks,
                        double *scratch, size_t scratch_bytes, double amount,
                        const kernels_config *config);

#endif
