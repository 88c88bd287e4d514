/* ropegrad.h: the umbrella header. Include this one file in a training script and link build/libropegrad.a
 * (plus OpenBLAS and HDF5: see README.md). The experiment's tasks (src/task/task.h, build/libropegrad_tasks.a) are
 * not part of the library. */
#ifndef ROPEGRAD_H
#define ROPEGRAD_H

#include "version.h"
#include "tensor/tensor.h"
#include "tensor/ops.h"
#include "tensor/rng.h"
#include "tensor/blas.h"
#include "autograd/autograd.h"
#include "nn/nn.h"
#include "nn/pos.h"
#include "nn/generate.h"
#include "io/checkpoint.h"

#endif
