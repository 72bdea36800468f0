/* Device nodes: present, and readable and writable by this user.
 *
 * GPU drivers hand compute to user space through character devices
 * (/dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidiaN; /dev/kfd and
 * /dev/dri/renderD*), which distributions give to a group (video, render)
 * with mode 0660. A user outside that group gets EACCES from open(2), and
 * the vendor library turns that into "no device": the commonest reason a
 * GPU that is plainly there cannot be used. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor.h"

#define STAT_FILE "/dev/.gpuopt-stat"

/* The recorded owner and mode of `path` from the tree's stand-in file:
 * lines "path mode uid gid" as `stat -c '%n %a %u %g'` prints them. */
static void recorded_meta(const gpo_fs *fs, const char *path, gpo_dr_node *n)
{
    char *text = NULL;
    n->mode = 0666;
    n->uid = 0;
    n->gid = 0;
    if (gpo_fs_read_alloc(fs, STAT_FILE, &text, NULL) != GPUOPT_OK)
        return;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[GPO_PATH_MAX];
        unsigned mode;
        unsigned long uid, gid;
        if (sscanf(line, "%4095s %o %lu %lu", name, &mode, &uid, &gid) != 4)
            continue;
        if (strcmp(name, path) != 0)
            continue;
        n->mode = mode & 0777;
        n->uid = (uid_t)uid;
        n->gid = (gid_t)gid;
        break;
    }
    free(text);
}

/* What access(2) answers for R_OK|W_OK, from the mode bits (no ACLs). */
static int mode_allows(const gpo_dr_user *u, const gpo_dr_node *n)
{
    if (u->known && u->uid == 0)
        return 1;
    unsigned bits;
    if (u->known && u->uid == n->uid)
        bits = (n->mode >> 6) & 7;
    else if (u->known && gpo_dr_user_in_group(u, n->gid))
        bits = (n->mode >> 3) & 7;
    else
        bits = n->mode & 7;
    return (bits & 6) == 6;
}

void gpo_dr_node_stat(const gpo_fs *fs, const gpo_dr_user *u, const char *path, gpo_dr_node *n)
{
    memset(n, 0, sizeof *n);
    n->access_errno = ENOENT;
    if (gpo_fs_is_recorded(fs)) {
        if (!gpo_fs_exists(fs, path))
            return;
        n->exists = 1;
        n->is_char = 1;
        recorded_meta(fs, path, n);
        n->accessible = mode_allows(u, n);
        n->access_errno = n->accessible ? 0 : EACCES;
        return;
    }
    char full[GPO_PATH_MAX];
    struct stat st;
    if (gpo_fs_path(fs, path, full, sizeof full) != GPUOPT_OK || stat(full, &st) != 0) {
        n->access_errno = errno;
        return;
    }
    n->exists = 1;
    n->is_char = S_ISCHR(st.st_mode);
    n->mode = st.st_mode & 0777;
    n->uid = st.st_uid;
    n->gid = st.st_gid;
    if (gpo_fs_access(fs, path, R_OK | W_OK) == 0) {
        n->accessible = 1;
        n->access_errno = 0;
    } else {
        n->access_errno = errno;
    }
}

/* One finding for the denied nodes that share owner, group and mode (the
 * same fix applies to all of them). */
static void denied_group(gpo_dr_report *r, const gpo_fs *fs, const gpo_dr_user *u,
                         const char *backend, const char *mode_fix, const char *const *paths,
                         const gpo_dr_node *n, const size_t *members, size_t count)
{
    char group[64], owner_groups[1024];
    const char *who = strncmp(u->name, "uid ", 4) == 0 ? "$USER" : u->name;
    const gpo_dr_node *first = &n[members[0]];
    const char *path = paths[members[0]];
    gpo_dr_group_name(fs, first->gid, group, sizeof group);
    gpo_dr_user_groups_text(fs, u, owner_groups, sizeof owner_groups);

    gpo_dr_finding *f = gpo_dr_add(r, backend, "device_permissions", GPO_DR_PROBLEM);
    gpo_dr_path(r, f, path);
    if (count == 1)
        gpo_dr_say(r, f,
                   "%s is not readable and writable by %s, so the driver cannot use the "
                   "GPU behind it",
                   path, u->name);
    else
        gpo_dr_say(r, f,
                   "%zu device nodes (%s, ...) are not readable and writable by %s, so the "
                   "driver cannot use the GPUs behind them",
                   count, path, u->name);
    for (size_t i = 0; i < count; i++) {
        const gpo_dr_node *x = &n[members[i]];
        gpo_dr_evidence(r, f,
                        "%s: mode %04o, owner uid %lu, group %s(%lu); access(R_OK|W_OK): "
                        "%s",
                        paths[members[i]], x->mode, (unsigned long)x->uid, group,
                        (unsigned long)x->gid, strerror(x->access_errno));
    }
    gpo_dr_evidence(r, f, "groups of %s (from %s): %s", u->name, u->source,
                    owner_groups[0] ? owner_groups : "none");

    int group_rw = (first->mode & 060) == 060;
    if (group_rw && first->gid != 0 && !gpo_dr_user_in_group(u, first->gid)) {
        if (gpo_dr_group_lists_user(fs, first->gid, u->name) == 1) {
            gpo_dr_evidence(r, f,
                            "the group database lists %s in %s, but this session does "
                            "not carry it",
                            u->name, group);
            gpo_dr_fix(r, f,
                       "log out and back in (group membership is read at login), or run "
                       "`newgrp %s` in this shell",
                       group);
        } else {
            gpo_dr_fix(r, f,
                       "sudo usermod -aG %s %s, then log out and back in (or run "
                       "`newgrp %s`)",
                       group, who, group);
        }
    } else if (group_rw && gpo_dr_user_in_group(u, first->gid)) {
        gpo_dr_fix(r, f,
                   "%s is in group %s and the mode allows it, yet access is refused: check "
                   "ACLs (`getfacl %s`), security modules, and in a container that the "
                   "device was passed in with read-write access",
                   u->name, group, path);
    } else {
        gpo_dr_fix(r, f, mode_fix, who);
    }
}

int gpo_dr_nodes_denied(gpo_dr_report *r, const gpo_fs *fs, const gpo_dr_user *u,
                        const char *backend, const char *mode_fix, const char *const *paths,
                        const gpo_dr_node *n, size_t count)
{
    size_t members[64];
    int done[64] = {0}, denied = 0;
    if (count > 64)
        count = 64;
    for (size_t i = 0; i < count; i++) {
        if (done[i] || !n[i].exists || n[i].accessible)
            continue;
        size_t m = 0;
        for (size_t k = i; k < count; k++) {
            if (done[k] || !n[k].exists || n[k].accessible || n[k].gid != n[i].gid ||
                n[k].uid != n[i].uid || n[k].mode != n[i].mode)
                continue;
            done[k] = 1;
            members[m++] = k;
        }
        denied += (int)m;
        denied_group(r, fs, u, backend, mode_fix, paths, n, members, m);
    }
    return denied;
}
