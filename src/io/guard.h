/* guard.h: the digest block, checked before HDF5 parses a file, so that an accidental change (a flipped bit, a
 * truncation) never reaches HDF5 (docs/checkpoint.md "Corrupted files"). A file whose digest was
 * recomputed after a change (re-sealed) or that has none is still parsed only in the HDF5 reader process
 * (h5_image.h): a CRC is an accident check, not a proof that the content is safe to parse.
 *
 * 1. The digest block. A sealed file starts with a 512-byte HDF5 user block (HDF5 and every HDF5 tool skip it;
 *    h5py, h5dump read the file as usual) holding readable text:
 *        ropegrad-digest 1
 *        crc32 <8 hex digits>        CRC-32 (zlib's, IEEE 802.3) of the file's bytes after the block
 *        bytes <decimal>             the file's length
 *    then NUL padding. rg_guard_verify recomputes both: a CRC-32 detects every change of up to 32 consecutive bits
 *    (so every single-byte change) and all but 2^-32 of other changes, before HDF5 reads a byte. */
#ifndef RG_IO_GUARD_H
#define RG_IO_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "h5.h"

#define RG_GUARD_BLOCK 512          /* user block size */

/* CRC-32 (polynomial 0xEDB88320 reflected, init and final xor 0xFFFFFFFF: zlib's crc32, Python's zlib.crc32) of
 * p[0..n) continuing from crc (start with 0). */
uint32_t rg_crc32(uint32_t crc, const void *p, size_t n);

/* Writes the digest block of the image buf[0..n) into its first RG_GUARD_BLOCK bytes (an HDF5 file created with
 * a user block of that size). */
void rg_guard_seal(unsigned char *buf, size_t n);

/* Checks the digest block of buf[0..n). *sealed = true if the file has one and it matches (RG_OK); *sealed =
 * false and RG_OK if the file has no user block (the HDF5 signature is at offset 0). RG_ERR_FORMAT: a user block
 * that is not a digest block (damaged, or added by another tool), a length other than the one recorded
 * (truncated or extended), bytes whose CRC-32 differs from the recorded one (corrupted, or edited after saving). */
rg_status rg_guard_verify(const rg_h5_src *src, const unsigned char *buf, size_t n, bool *sealed);

#endif
