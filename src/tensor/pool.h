/* pool.h: the library's own worker threads, for the work OpenBLAS does not thread for it: libxsmm products split by
 * rows, attention's per-(batch, head) loops and the large elementwise passes (rg_pool_for). Internal to the
 * library. rg_set_num_threads(n) sizes it (n - 1 workers next to the calling thread; none by default). Workers
 * start from the thread that sized the pool, with FTZ/DAZ set (tensor.h). */
#ifndef RG_POOL_H
#define RG_POOL_H

#include <stdint.h>

/* One part of a parallel job: part in [0, nparts). */
typedef void (*rg_pool_fn)(void *arg, int part, int nparts);

/* Threads a job may use (1 + workers); 1 inside a job, so nested calls run inline. */
int rg_pool_threads(void);
/* Runs fn(arg, i, nparts) for every i < nparts: part 0 on the calling thread, the others on workers; returns when
 * all are done. Runs every part inline when the pool has no workers, is busy, or this is a nested call. */
void rg_pool_run(rg_pool_fn fn, void *arg, int nparts);
/* The smallest elementwise pass worth a part of its own (elements): below about 2 x this a pass of a few tens of
 * microseconds stays on the calling thread, where handing it to a worker would cost more than it saves. (AdamW,
 * whose element costs a double division and square root, splits from 2 x RG_POOL_GRAIN / 4.) */
#define RG_POOL_GRAIN 65536
/* The smallest part (iterations) of a pass whose iterations cover `width` elements each (rows of `width` columns,
 * or columns of `width` rows): more than RG_POOL_GRAIN elements; a width <= 0 counts as 1. */
static inline int64_t rg_pool_part_min(int64_t width) { return RG_POOL_GRAIN / (width > 0 ? width : 1) + 1; }

/* One range of a split loop: the iterations [begin, end) of [0, n). */
typedef void (*rg_range_fn)(void *arg, int64_t begin, int64_t end);
/* Runs fn over [0, n) in contiguous ranges, at most one per thread of the pool and at most n / min_per_part of them
 * (below 2 * min_per_part one call fn(arg, 0, n) on the calling thread); range bounds are multiples of `align` (>= 1)
 * except n, so a range may fall short of min_per_part by less than align. Every iteration runs exactly once, so
 * when the iterations are independent (each writes its own outputs, and any sum over iterations is kept per output
 * in iteration order) the results are the bits of fn(arg, 0, n) at any thread count. */
void rg_pool_for(int64_t n, int64_t min_per_part, int64_t align, rg_range_fn fn, void *arg);
/* Stops the workers and starts n - 1 new ones (n >= 1). */
void rg_pool_resize(int n);

#endif
