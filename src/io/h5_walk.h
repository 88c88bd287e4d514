/* h5_walk.h: what the two parts of the reader process's walk share (h5_walk.c: the walk and the stream it writes;
 * h5_walk_storage.c: the storage checks of a dataset). Runs only in the forked child (h5_image.h). Not a public
 * header. */
#ifndef RG_IO_H5_WALK_H
#define RG_IO_H5_WALK_H

#include "h5_image.h"

/* The child's output stream and the state of the walk. */
typedef struct {
    int fd;
    unsigned char buf[1 << 16];
    size_t used;
    uint32_t records;
    int objects;
    uint64_t data_bytes;
    const rg_h5_src *src;
    const rg_h5_image_opts *opts;
    size_t file_n;
    haddr_t *groups; /* addresses of the groups visited (a hard link cycle is not followed twice) */
    int n_groups, cap_groups;
} writer;

/* Every chunk (or the contiguous or compact block) of d allocated, of its exact size, inside the file: else a
 * reason in err (h5_walk_storage.c). */
void rg_h5i_storage_check(writer *w, hid_t d, int nd, const hsize_t *dims, size_t tsize, char *err, size_t en);

/* The values HDF5 read (data, native form of the stored type ft) against the raw bytes of every chunk as stored;
 * a mismatch is a reason in err (h5_walk_storage.c). */
void rg_h5i_verify_chunks(hid_t d, hid_t ft, int nd, const hsize_t *dims, size_t tsize, const unsigned char *data,
                          char *err, size_t en);

#endif
