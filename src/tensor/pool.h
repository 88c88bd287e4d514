/* pool.h: the library's own worker threads, for the work OpenBLAS does not thread for it: libxsmm products split by
 * rows and attention's per-(batch, head) loops. Internal to the library. rg_set_num_threads(n) sizes it (n - 1
 * workers next to the calling thread; none by default). Workers start from the thread that sized the pool, with
 * FTZ/DAZ set (tensor.h). */
#ifndef RG_POOL_H
#define RG_POOL_H

/* One part of a parallel job: part in [0, nparts). */
typedef void (*rg_pool_fn)(void *arg, int part, int nparts);

/* Threads a job may use (1 + workers); 1 inside a job, so nested calls run inline. */
int rg_pool_threads(void);
/* Runs fn(arg, i, nparts) for every i < nparts: part 0 on the calling thread, the others on workers; returns when
 * all are done. Runs every part inline when the pool has no workers, is busy, or this is a nested call. */
void rg_pool_run(rg_pool_fn fn, void *arg, int nparts);
/* Stops the workers and starts n - 1 new ones (n >= 1). */
void rg_pool_resize(int n);

#endif
