/* h5_walk_storage.c: the storage checks of a dataset in the reader process's walk (h5_walk.c): every chunk (or the
 * contiguous or compact block) allocated, of its exact size, inside the file, and the values HDF5 read against the
 * raw bytes of every stored chunk. Runs only in the forked child (h5_image.h). */
#include "h5_walk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ datasets: storage */

/* Every chunk (or the contiguous or compact block) of d allocated, of its exact size, inside the file: else a
 * reason in err. HDF5 reads a chunk it cannot find as the fill value, so this is what stands between a damaged
 * chunk index and a silently zero weight. */
void rg_h5i_storage_check(writer *w, hid_t d, int nd, const hsize_t *dims, size_t tsize, char *err, size_t en)
{
    hsize_t numel = 1;
    for (int i = 0; i < nd; i++) {
        if (dims[i] && numel > UINT64_MAX / dims[i] / (tsize ? tsize : 1)) {
            snprintf(err, en, "its shape holds more than 2^64 bytes");
            return;
        }
        numel *= dims[i];
    }
    hsize_t bytes = numel * tsize;
    hid_t dcpl = H5Dget_create_plist(d);
    if (dcpl < 0) { snprintf(err, en, "its creation properties cannot be read (corrupt file?)"); return; }
    H5D_layout_t layout = H5Pget_layout(dcpl);
    int n_ext = H5Pget_external_count(dcpl);
    int n_filters = H5Pget_nfilters(dcpl);
    hsize_t cdims[RG_H5I_MAX_ND];
    int cnd = layout == H5D_CHUNKED ? H5Pget_chunk(dcpl, RG_H5I_MAX_ND, cdims) : 0;
    H5Pclose(dcpl);
    if (n_ext != 0) { snprintf(err, en, "its values are stored in an external file"); return; }
    if (numel == 0) return;
    /* (H5Dget_space_status is not used: HDF5 1.10 reports a complete filtered chunk as "partly allocated") */
    if (layout == H5D_COMPACT || layout == H5D_CONTIGUOUS) {
        hsize_t got = H5Dget_storage_size(d);
        haddr_t off = layout == H5D_CONTIGUOUS ? H5Dget_offset(d) : 0;
        if (got != bytes) snprintf(err, en, "it has %llu bytes of storage for %llu bytes of values",
                                   (unsigned long long)got, (unsigned long long)bytes);
        else if (off == HADDR_UNDEF || off > w->file_n || bytes > w->file_n - off)
            snprintf(err, en, "its storage lies outside the file");
        return;
    }
    if (layout != H5D_CHUNKED) { snprintf(err, en, "its storage layout %d is not supported", (int)layout); return; }
    if (cnd != nd) { snprintf(err, en, "its chunk shape has %d dimensions, the dataset %d", cnd, nd); return; }
    hsize_t want = 1, cbytes = tsize, grid[RG_H5I_MAX_ND];
    for (int i = 0; i < nd; i++) {
        if (cdims[i] == 0) { snprintf(err, en, "it has a chunk dimension of 0"); return; }
        grid[i] = (dims[i] + cdims[i] - 1) / cdims[i];
        want *= grid[i];
        if (want > RG_H5I_MAX_CHUNKS || cdims[i] > bytes) {
            snprintf(err, en, "it has more than %d chunks or a chunk larger than its values", RG_H5I_MAX_CHUNKS);
            return;
        }
        cbytes *= cdims[i];
    }
    hsize_t got = 0;
    hid_t space = H5Dget_space(d); /* HDF5 1.10 refuses H5S_ALL here */
    herr_t r = space < 0 ? -1 : H5Dget_num_chunks(d, space, &got);
    if (space >= 0) H5Sclose(space);
    if (r < 0 || got != want) {
        snprintf(err, en, "%llu of its %llu chunks are allocated (HDF5 would read the missing ones as the fill value)",
                 (unsigned long long)got, (unsigned long long)want);
        return;
    }
    hsize_t idx[RG_H5I_MAX_ND] = {0}, off[RG_H5I_MAX_ND];
    for (hsize_t k = 0; k < want; k++) {
        for (int i = 0; i < nd; i++) off[i] = idx[i] * cdims[i];
        unsigned mask = 0;
        haddr_t addr = HADDR_UNDEF;
        hsize_t size = 0;
        if (H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size) < 0 || addr == HADDR_UNDEF || size == 0) {
            snprintf(err, en, "its chunk %llu of %llu cannot be found (HDF5 would read it as the fill value)",
                     (unsigned long long)k, (unsigned long long)want);
            return;
        }
        if (mask != 0) { snprintf(err, en, "its chunk %llu skips filters (mask %u)", (unsigned long long)k, mask); return; }
        if (addr > w->file_n || size > w->file_n - addr) {
            snprintf(err, en, "its chunk %llu lies outside the file", (unsigned long long)k);
            return;
        }
        if (n_filters == 0 && size != cbytes) {
            snprintf(err, en, "its chunk %llu has %llu bytes, expected %llu", (unsigned long long)k,
                     (unsigned long long)size, (unsigned long long)cbytes);
            return;
        }
        for (int i = nd - 1; i >= 0 && ++idx[i] == grid[i]; i--) idx[i] = 0;
    }
}

/* The values HDF5 read (data, native form of the stored type ft) against the raw bytes of every chunk as stored
 * (H5Dread_chunk: the index entry found by coordinates): a read that silently produced the fill value for a chunk
 * its read path could not find, while the chunk index still lists it, is caught here. Done for chunked datasets
 * whose filters are only Fletcher-32 (its 4 trailing bytes dropped) or none (the checkpoints); datasets with other
 * filters (deflate: the evaluation sets) are checked by their readers' value checks. */
void rg_h5i_verify_chunks(hid_t d, hid_t ft, int nd, const hsize_t *dims, size_t tsize, const unsigned char *data,
                          char *err, size_t en)
{
    hid_t dcpl = H5Dget_create_plist(d);
    if (dcpl < 0) return;
    hsize_t cdims[RG_H5I_MAX_ND];
    bool chunked = H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, RG_H5I_MAX_ND, cdims) == nd;
    int nf = H5Pget_nfilters(dcpl);
    bool plain = nf == 0;
    if (nf == 1) {
        unsigned flags;
        size_t ncd = 0;
        plain = H5Pget_filter2(dcpl, 0, &flags, &ncd, NULL, 0, NULL, NULL) == H5Z_FILTER_FLETCHER32;
    }
    H5Pclose(dcpl);
    if (!chunked || !plain) return;
    hsize_t ce = 1, grid[RG_H5I_MAX_ND], idx[RG_H5I_MAX_ND] = {0}, off[RG_H5I_MAX_ND], want = 1;
    for (int i = 0; i < nd; i++) {
        ce *= cdims[i];
        grid[i] = (dims[i] + cdims[i] - 1) / cdims[i];
        want *= grid[i];
    }
    size_t cbytes = (size_t)(ce * tsize);
    unsigned char *raw = malloc(cbytes + 8);
    hid_t mt = H5Tget_native_type(ft, H5T_DIR_DEFAULT);
    if (!raw || mt < 0) {
        snprintf(err, en, "out of memory to verify its chunks");
        free(raw);
        if (mt >= 0) H5Tclose(mt);
        return;
    }
    for (hsize_t k = 0; k < want && !err[0]; k++) {
        for (int i = 0; i < nd; i++) off[i] = idx[i] * cdims[i];
        hsize_t size = 0;
        uint32_t mask = 0;
        if (H5Dget_chunk_storage_size(d, off, &size) < 0 || size != cbytes + (nf ? 4 : 0) ||
            H5Dread_chunk(d, H5P_DEFAULT, off, &mask, raw) < 0 ||
            H5Tconvert(ft, mt, (size_t)ce, raw, NULL, H5P_DEFAULT) < 0) {
            snprintf(err, en, "its chunk %llu cannot be read as stored (a damaged chunk index: HDF5 would read the "
                     "fill value)", (unsigned long long)k);
            break;
        }
        /* element j of the chunk (C order within cdims) against the same element of the dataset */
        for (hsize_t j = 0; j < ce && !err[0]; j++) {
            hsize_t rem = j, flat = 0;
            bool inside = true;
            for (int i = nd - 1; i >= 0; i--) {
                hsize_t c = rem % cdims[i], g = off[i] + c;
                rem /= cdims[i];
                if (g >= dims[i]) inside = false;
            }
            if (!inside) continue;
            rem = j;
            hsize_t stride = 1;
            for (int i = nd - 1; i >= 0; i--) {
                flat += (off[i] + rem % cdims[i]) * stride;
                stride *= dims[i];
                rem /= cdims[i];
            }
            if (memcmp(raw + j * tsize, data + flat * tsize, tsize) != 0)
                snprintf(err, en, "HDF5 read values that differ from its chunk %llu as stored (a damaged chunk index: "
                         "HDF5 would have read the fill value)", (unsigned long long)k);
        }
        for (int i = nd - 1; i >= 0 && ++idx[i] == grid[i]; i--) idx[i] = 0;
    }
    H5Tclose(mt);
    free(raw);
}
