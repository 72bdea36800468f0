/* gpuopt_context_diagnose: why each backend can or cannot use a GPU here, and what to
 * do about it. Internal to the library; the public face is gpuopt_context_diagnose()
 * in gpuopt.h and the format is docs/doctor.md.
 *
 * This header is what a backend's diagnose entry (src/backend.h) may use:
 * the findings, the user, device nodes, machine facts, visibility lists,
 * and through the run its own probe (gpo_dr_slot) and library path
 * (gpo_dr_library). It never sees the context or the configuration.
 *
 * The checks read the machine through src/util/fs.h only (/sys, /proc, /dev,
 * /etc/group, /etc/OpenCL/vendors, the usual library directories), so a
 * recorded tree under GPUOPT_SYSFS_ROOT stands in for the live system in
 * tests. What a recorded tree cannot hold (who owns a device node and its
 * mode, who the user is) comes from stand-in files described in
 * docs/doctor.md: /dev/.gpuopt-stat and /proc/self/status.
 *
 * A check adds findings to a report: gpo_dr_add() starts one, gpo_dr_say()
 * sets its one-line summary, gpo_dr_evidence() appends a fact,
 * gpo_dr_fix() sets what to do. Every function accepts a NULL finding
 * (an allocation that failed) and does nothing: the report latches the
 * failure and gpuopt_context_diagnose returns GPUOPT_ERR_NO_MEMORY once, at the end. */
#ifndef GPO_DOCTOR_H
#define GPO_DOCTOR_H

#include <stddef.h>
#include <sys/types.h>

#include "backend.h"
#include "util/detail.h"
#include "util/fs.h"

/* Ordered by severity: a block's worst finding decides its mark. */
typedef enum gpo_dr_status {
    GPO_DR_OK = 0,      /* checked and fine */
    GPO_DR_INFO = 1,    /* a fact worth knowing; nothing to do */
    GPO_DR_WARNING = 2, /* works, but not as the user likely wants */
    GPO_DR_PROBLEM = 3  /* stops this backend from using a GPU */
} gpo_dr_status;

/* "ok", "info", "warning", "problem". */
const char *gpo_dr_status_word(gpo_dr_status st);

typedef struct gpo_dr_finding {
    const char *backend; /* static: "cuda", "rocm", "opencl", "cpu" */
    const char *check;   /* static: "device_nodes", "visible_devices", ... */
    gpo_dr_status status;
    char *summary;   /* one sentence */
    char **evidence; /* facts: file and value, variable and value, error text */
    size_t n_evidence;
    char *path; /* the file or variable the finding is about, or NULL */
    char *fix;  /* a command or a sentence; NULL when nothing is to be done */
} gpo_dr_finding;

typedef struct gpo_dr_report {
    gpo_dr_finding *items;
    size_t n, cap;
    int failed; /* an allocation failed somewhere */
} gpo_dr_report;

gpo_dr_finding *gpo_dr_add(gpo_dr_report *r, const char *backend, const char *check,
                           gpo_dr_status status);
void gpo_dr_say(gpo_dr_report *r, gpo_dr_finding *f, const char *fmt, ...) GPO_PRINTF(3, 4);
void gpo_dr_evidence(gpo_dr_report *r, gpo_dr_finding *f, const char *fmt, ...) GPO_PRINTF(3, 4);
void gpo_dr_fix(gpo_dr_report *r, gpo_dr_finding *f, const char *fmt, ...) GPO_PRINTF(3, 4);
void gpo_dr_path(gpo_dr_report *r, gpo_dr_finding *f, const char *path);
void gpo_dr_report_free(gpo_dr_report *r);

/* ---- The user: who is asking, and in which groups ------------------------ */

/* Linux allows 65536 supplementary groups; more than this many is unheard
 * of outside directory-service setups, and the rest are not looked at. */
#define GPO_DR_MAX_GROUPS 1024

typedef struct gpo_dr_user {
    uid_t uid;
    gid_t gid;                       /* primary group */
    gid_t groups[GPO_DR_MAX_GROUPS]; /* this process's supplementary groups */
    size_t n_groups;
    char name[64];      /* "alice", or "uid 1000" when unknown */
    int known;          /* 0: the identity could not be read */
    const char *source; /* "this process" or "/proc/self/status" */
} gpo_dr_user;

/* The live process's identity (getuid, getgroups, getpwuid_r), or under a
 * recorded root the tree's /proc/self/status (Uid:, Gid:, Groups:) and
 * /etc/passwd. */
void gpo_dr_user_read(const gpo_fs *fs, gpo_dr_user *u);

/* 1 when the user's process carries `gid` (primary or supplementary). */
int gpo_dr_user_in_group(const gpo_dr_user *u, gid_t gid);

/* The name of group `gid` (getgrgid_r live, the tree's /etc/group when
 * recorded); "gid N" when unknown. */
void gpo_dr_group_name(const gpo_fs *fs, gid_t gid, char *out, size_t cap);

/* 1 when the group database lists `user` as a member of `gid` (the
 * membership a new login would get), 0 when not, -1 when unknown. */
int gpo_dr_group_lists_user(const gpo_fs *fs, gid_t gid, const char *user);

/* "alice(1000), users(100), video(44)". */
void gpo_dr_user_groups_text(const gpo_fs *fs, const gpo_dr_user *u, char *out, size_t cap);

/* ---- Device nodes ----------------------------------------------------------- */

typedef struct gpo_dr_node {
    int exists;
    int is_char;   /* a character device (recorded trees: assumed) */
    unsigned mode; /* permission bits, 0777 */
    uid_t uid;
    gid_t gid;
    int accessible;   /* read and write allowed to the user */
    int access_errno; /* why not (EACCES, ENOENT, ...) */
} gpo_dr_node;

/* Stats `path` ("/dev/nvidia0") and asks access(R_OK|W_OK). Live: stat(2)
 * and access(2). Recorded: the node exists when the tree has the file; its
 * owner and mode come from the tree's /dev/.gpuopt-stat ("path mode uid
 * gid", mode in octal; 0666 root:root when unlisted) and access is decided
 * from them and `u` the way access(2) decides for a process without
 * capabilities (uid 0 may do anything). */
void gpo_dr_node_stat(const gpo_fs *fs, const gpo_dr_user *u, const char *path, gpo_dr_node *n);

/* Adds "device_permissions" findings for the nodes of `n` that exist but
 * are not accessible, one per set sharing owner, group and mode: the
 * nodes' owner, group and mode, the user's groups, and the fix (usermod
 * -aG, or a new login when the group database already lists the user).
 * `mode_fix` is the backend's fix for nodes whose mode lets no group read
 * and write them (how its driver sets the mode): a printf format whose one
 * %s is the user. Returns the number of inaccessible nodes (at most 64 are
 * looked at). */
int gpo_dr_nodes_denied(gpo_dr_report *r, const gpo_fs *fs, const gpo_dr_user *u,
                        const char *backend, const char *mode_fix, const char *const *paths,
                        const gpo_dr_node *n, size_t count);

/* ---- Machine facts shared by the vendor checks ---------------------------- */

#define GPO_DR_MAX_PCI 64

typedef struct gpo_dr_pci_gpu {
    char bdf[16];       /* "0000:17:00.0" */
    unsigned vendor;    /* 0x10de, 0x1002, 0x8086, ... */
    unsigned device;    /* 0 when unreadable */
    unsigned pci_class; /* 0x030200 */
    char driver[32];    /* bound kernel driver ("nvidia", "amdgpu"), "" none */
} gpo_dr_pci_gpu;

typedef struct gpo_dr_facts {
    /* Display controllers (class 0x03) and processing accelerators (0x12)
     * on the PCI bus, in bus order. */
    gpo_dr_pci_gpu gpus[GPO_DR_MAX_PCI];
    size_t n_gpus;
    size_t n_pci_scanned; /* every PCI function looked at */
    int pci_readable;     /* /sys/bus/pci/devices could be listed */
    /* A container, and what says so ("/.dockerenv"); "" when none seen. */
    char container[128];
} gpo_dr_facts;

void gpo_dr_facts_read(const gpo_fs *fs, gpo_dr_facts *f);

/* GPUs of `vendor` on the PCI bus. */
size_t gpo_dr_pci_count(const gpo_dr_facts *f, unsigned vendor);

/* "display controller", "3D controller", ... for a PCI class. */
const char *gpo_dr_pci_class_word(unsigned pci_class);

/* ---- Visibility variables ------------------------------------------------------ */

/* What a driver makes of one visibility variable (CUDA_VISIBLE_DEVICES,
 * HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, ...), as the backend's own
 * parser reads it (backends/cuda/cuda_visible.c, backends/rocm/
 * rocm_visible.c): the entries that count, and where and why reading
 * stopped. */
typedef struct gpo_dr_visible {
    int valid;        /* entries before the first invalid one */
    int total;        /* entries in the list */
    char bad[64];     /* the first invalid entry, "" when none */
    char why_bad[96]; /* "negative", "index 3 >= 2 GPUs", "not a number or UUID" */
} gpo_dr_visible;

/* A backend's own reading of one visibility variable: what its driver
 * makes of `value` (the backend's one visibility parser, the same that
 * enumerate uses, so the doctor never tells the user something the backend
 * does not do). `arg` is the backend's (its known devices). */
typedef void (*gpo_dr_visible_fn)(const char *variable, const char *value, void *arg,
                                  gpo_dr_visible *out);

/* Adds a "visible_devices" finding per variable of `vars` that is set, as
 * `parse` reads it; `n_devices` is how many GPUs the kernel lists (-1
 * unknown). */
void gpo_dr_check_visible(gpo_dr_report *r, const char *backend, const char *const *vars,
                          size_t n_vars, gpo_dr_visible_fn parse, void *arg, int n_devices,
                          int vendor_present);

/* ---- One pass of the doctor ------------------------------------------------- */

/* One backend as the context probed it, copied when the doctor starts: all
 * a diagnose may read of a backend's state. */
typedef struct gpo_backend_slot {
    const char *name;          /* static: the backend's name */
    int32_t status;            /* gpuopt_backend_status */
    gpo_backend_report report; /* what its load said */
    int32_t n_found;           /* devices it listed, before merging */
    int32_t usable;            /* accelerators usable through it (not CPUs) */
    int32_t cpus;              /* CPU devices it listed (PoCL's, the CPU backend's) */
    const void *state;         /* what its load returned, NULL when none: only the
                                  backend's own diagnose knows its type */
} gpo_backend_slot;

typedef struct gpo_dr_run {
    const gpo_fs *fs; /* the machine: GPUOPT_SYSFS_ROOT or the live system */
    gpo_dr_report *rep;
    gpo_dr_user user;
    gpo_dr_facts facts;
    /* Every backend of the context, in its order (read with gpo_dr_slot). */
    const gpo_backend_slot *slots;
    size_t n_slots;
    /* The backends' environment: library paths (read with gpo_dr_library). */
    const gpo_backend_env *env;
} gpo_dr_run;

/* The backend's slot, or NULL when this context has no such backend. */
const gpo_backend_slot *gpo_dr_slot(const gpo_dr_run *run, const char *backend);

/* The "backend" finding common to every block: status, reason, library,
 * versions, devices. `hardware` says whether the machine shows signs of
 * that vendor's GPU, which turns an unavailable backend from a fact (info)
 * into a problem. */
void gpo_dr_check_backend(gpo_dr_run *run, const char *backend, int hardware);

/* The user's path for vendor library `key` ("cuda"), or NULL for the
 * backend's default sonames. */
const char *gpo_dr_library(const gpo_dr_run *run, const char *key);

/* A readable getenv for the doctor: NULL when unset. The variables the
 * doctor looks at (visibility, loader paths, container toolkits) are the
 * user's own settings that the drivers read; they change nothing here. */
const char *gpo_dr_env(const char *name);

/* Looks for `file` ("libcuda.so.1") in the folders of LD_LIBRARY_PATH (as
 * given) and the usual library folders (under the root); adds what it saw
 * as evidence to `f`. Returns the number of places it was found. */
int gpo_dr_find_library(gpo_dr_report *r, gpo_dr_finding *f, const gpo_fs *fs, const char *file);

#endif
