/* main.c: train_order, the length-extrapolation experiment: the whole program is the experiment engine's entry
 * point (src/engine/engine.h). Exit status: 0 on success, 1 on any failed run or output, 2 on a bad command line. */
#include "engine/engine.h"

int main(int argc, char **argv) { return rg_engine_main(argc, argv); }
