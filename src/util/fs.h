/* Every read of /sys and /proc goes through here, so a recorded tree under
 * GPUOPT_SYSFS_ROOT (the idea of hwloc's HWLOC_FSROOT) can stand in for the
 * live system in tests. Paths given to these functions are absolute
 * ("/sys/devices/system/cpu/online"); the root is prefixed here. */
#ifndef GPO_FS_H
#define GPO_FS_H

#include <stddef.h>
#include <stdint.h>

#include "detail.h"

#define GPO_PATH_MAX 4096

typedef struct gpo_fs {
    char root[GPO_PATH_MAX]; /* "" for the live system, else no trailing '/' */
} gpo_fs;

/* `root` NULL or "" means the live system. A trailing '/' is dropped. */
void gpo_fs_init(gpo_fs *fs, const char *root);

/* 1 when a recorded tree stands in for the live system. */
int gpo_fs_is_recorded(const gpo_fs *fs);

/* Writes root + path to out. GPUOPT_ERR_OUT_OF_RANGE when it does not fit. */
gpuopt_status gpo_fs_path(const gpo_fs *fs, const char *path, char *out, size_t cap);

/* Reads a whole (small) file into buf, NUL-terminated, trailing whitespace
 * trimmed. GPUOPT_ERR_NOT_FOUND when it does not exist, GPUOPT_ERR_IO when
 * it cannot be read. A file longer than cap-1 is truncated (sysfs values are
 * short; use gpo_fs_read_alloc for /proc/cpuinfo and friends). cap > 0. */
gpuopt_status gpo_fs_read(const gpo_fs *fs, const char *path, char *buf, size_t cap);

/* gpo_fs_read with the path built by printf. */
gpuopt_status gpo_fs_readf(const gpo_fs *fs, char *buf, size_t cap, const char *fmt, ...)
    GPO_PRINTF(4, 5);

/* The most gpo_fs_read_alloc reads: /proc/cpuinfo of a 1024-CPU machine
 * is about 1.5 MiB. */
#define GPO_FS_MAX_FILE ((size_t)16 << 20)

/* Reads a whole file up to GPO_FS_MAX_FILE (longer is GPUOPT_ERR_IO naming
 * the limit); *out is malloc'd and NUL-terminated. Files are opened as
 * regular files only (util/file.h); under a recorded root gpo_fs_read does
 * the same, so a FIFO or device in a recorded tree cannot block a read. */
gpuopt_status gpo_fs_read_alloc(const gpo_fs *fs, const char *path, char **out, size_t *len);

/* Reads a file holding one unsigned decimal (or 0x hex) number. "max" and
 * other words are GPUOPT_ERR_INVALID_ARGUMENT. */
gpuopt_status gpo_fs_read_u64(const gpo_fs *fs, const char *path, uint64_t *value);

/* 1 when the path exists (any type). */
int gpo_fs_exists(const gpo_fs *fs, const char *path);

/* access(2) on root + path; 0 when allowed, else -1 with errno. */
int gpo_fs_access(const gpo_fs *fs, const char *path, int mode);

/* Lists a directory's entries (no "." and ".."), sorted with strcmp so the
 * order never depends on the file system or locale. *names is an array of
 * *count malloc'd strings; free with gpo_fs_list_free. A missing directory
 * is GPUOPT_ERR_NOT_FOUND. */
gpuopt_status gpo_fs_list(const gpo_fs *fs, const char *dir, char ***names, size_t *count);
void gpo_fs_list_free(char **names, size_t count);

/* Parses a Linux CPU list ("0-3,8,10-11") into a bitmap of `nbits` bits
 * (bytes = nbits/8). Bits past nbits are ignored. Returns the number of CPUs
 * set, or -1 when the text is malformed. */
int gpo_parse_cpulist(const char *text, unsigned char *bitmap, size_t nbits);

#endif
