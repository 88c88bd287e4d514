/* engine.h: the experiment engine (build/libropegrad_engine.a), the library behind examples/train_order: the grid
 * of task x position encoding x training variant x seed, the job pool (and MPI ranks), one run (training with
 * held-out steps-to-learn measurements, checkpoints, evaluation at the test lengths), and the outputs (report.md,
 * report.csv, report.json, plots, --compare, --replot) with the output folder's safety rules. Every option is
 * documented by `train_order --help` and in README.md.
 *
 * A program of its own calls rg_engine_main with its command line, exactly as examples/train_order/main.c does:
 *
 *     #include "engine/engine.h"
 *     int main(int argc, char **argv) { return rg_engine_main(argc, argv); }
 *
 * The engine's internal files (the .c files of src/engine, their headers train_order.h, report.h, settings.h,
 * mpi.h) use the prefix to_ and are not part of the installed interface.
 */
#ifndef RG_ENGINE_H
#define RG_ENGINE_H

/* Runs the experiment the command line describes (argv[0] names the program in messages; argv must be main's argv:
 * on CPUs that Debian's OpenBLAS does not recognize the process re-executes itself once with a faster kernel set,
 * see rg_blas_prefer_fast_kernels). Returns the process exit status: 0 on success, 1 if a run or an output failed
 * (every output that could be written is), 2 on a bad command line (nothing written). Under mpirun it also
 * initializes and finalizes MPI. Not reentrant: call it once per process. */
int rg_engine_main(int argc, char **argv);

#endif
