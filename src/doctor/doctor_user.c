/* Who the user is and which groups they are in: the facts behind every
 * "permission denied" on a device node.
 *
 * Live, these come from the process (getuid, getgid, getgroups) and the
 * group database through NSS (getgrgid_r, getpwuid_r). Under a recorded
 * root they come from the tree instead, so tests do not depend on who runs
 * them: /proc/self/status (the kernel's "Uid:", "Gid:" and "Groups:" lines,
 * proc(5)) stands in for the process, /etc/passwd and /etc/group (their
 * formats in passwd(5) and group(5)) for the database. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor.h"
#include "util/strutil.h"

/* ---- /etc/passwd and /etc/group in a recorded tree ------------------------ */

/* Splits a colon-separated database line into at most `max` fields, in
 * place; returns the number found. */
static int split_fields(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    while (n < max) {
        fields[n++] = p;
        char *colon = strchr(p, ':');
        if (!colon)
            break;
        *colon = '\0';
        p = colon + 1;
    }
    return n;
}

/* Calls `fn` for each well-formed line of the tree's `file` until it
 * returns non-zero; returns that value, or -1 when the file is unreadable. */
static int each_line(const gpo_fs *fs, const char *file, int nfields,
                     int (*fn)(char **fields, void *arg), void *arg)
{
    char *text = NULL;
    if (gpo_fs_read_alloc(fs, file, &text, NULL) != GPUOPT_OK)
        return -1;
    int result = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line && !result;
         line = strtok_r(NULL, "\n", &save)) {
        char *fields[8];
        if (line[0] == '#' || split_fields(line, fields, nfields) < nfields)
            continue;
        result = fn(fields, arg);
    }
    free(text);
    return result;
}

typedef struct lookup {
    unsigned long id;
    const char *name;
    char *out;
    size_t cap;
    unsigned long primary; /* passwd: the user's primary gid */
    int found;
} lookup;

static int parse_id(const char *s, unsigned long *out)
{
    int64_t v;
    if (gpo_parse_i64(s, 0, 0xffffffffLL, &v))
        return -1;
    *out = (unsigned long)v;
    return 0;
}

static int passwd_by_uid(char **f, void *arg)
{
    lookup *l = arg;
    unsigned long uid, gid;
    if (parse_id(f[2], &uid) || uid != l->id || parse_id(f[3], &gid))
        return 0;
    gpo_strlcpy(l->out, f[0], l->cap);
    l->primary = gid;
    return l->found = 1;
}

static int passwd_by_name(char **f, void *arg)
{
    lookup *l = arg;
    unsigned long gid;
    if (strcmp(f[0], l->name) != 0 || parse_id(f[3], &gid))
        return 0;
    l->primary = gid;
    return l->found = 1;
}

static int group_by_gid(char **f, void *arg)
{
    lookup *l = arg;
    unsigned long gid;
    if (parse_id(f[2], &gid) || gid != l->id)
        return 0;
    gpo_strlcpy(l->out, f[0], l->cap);
    return l->found = 1;
}

/* A group line lists `l->name` among its members. */
static int group_has_member(char **f, void *arg)
{
    lookup *l = arg;
    unsigned long gid;
    if (parse_id(f[2], &gid) || gid != l->id)
        return 0;
    l->found = 1;
    char members[4096];
    gpo_strlcpy(members, f[3], sizeof members);
    char *save = NULL;
    for (char *m = strtok_r(members, ",", &save); m; m = strtok_r(NULL, ",", &save))
        if (strcmp(gpo_trim(m), l->name) == 0)
            return 2;
    return 1;
}

/* ---- The user ------------------------------------------------------------------ */

/* "Uid:\t1000\t1000\t1000\t1000": the first number (the real id, the one
 * access(2) checks). */
static int status_id(const char *text, const char *key, unsigned long *out)
{
    const char *p = strstr(text, key);
    if (!p)
        return -1;
    p += strlen(key);
    char *end;
    errno = 0;
    unsigned long v = strtoul(p, &end, 10);
    if (end == p || errno)
        return -1;
    *out = v;
    return 0;
}

static void read_recorded(const gpo_fs *fs, gpo_dr_user *u)
{
    char *text = NULL;
    unsigned long uid, gid;
    u->source = "/proc/self/status";
    if (gpo_fs_read_alloc(fs, "/proc/self/status", &text, NULL) != GPUOPT_OK)
        return;
    if (status_id(text, "\nUid:", &uid) == 0 && status_id(text, "\nGid:", &gid) == 0) {
        u->uid = (uid_t)uid;
        u->gid = (gid_t)gid;
        u->known = 1;
        const char *g = strstr(text, "\nGroups:");
        if (g) {
            g += 8;
            while (*g && *g != '\n' && u->n_groups < GPO_DR_MAX_GROUPS) {
                char *end;
                unsigned long v = strtoul(g, &end, 10);
                if (end == g)
                    break;
                u->groups[u->n_groups++] = (gid_t)v;
                g = end;
                while (*g == ' ' || *g == '\t')
                    g++;
            }
        }
        lookup l = {uid, NULL, u->name, sizeof u->name, 0, 0};
        each_line(fs, "/etc/passwd", 4, passwd_by_uid, &l);
    }
    free(text);
}

static void read_live(gpo_dr_user *u)
{
    u->source = "this process";
    u->uid = getuid();
    u->gid = getgid();
    u->known = 1;
    int n = getgroups(0, NULL);
    gid_t *list = n > 0 ? calloc((size_t)n, sizeof *list) : NULL;
    if (list)
        n = getgroups(n, list);
    for (int i = 0; list && i < n && u->n_groups < GPO_DR_MAX_GROUPS; i++)
        u->groups[u->n_groups++] = list[i];
    free(list);
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwuid_r(u->uid, &pw, buf, sizeof buf, &res) == 0 && res)
        gpo_strlcpy(u->name, pw.pw_name, sizeof u->name);
}

void gpo_dr_user_read(const gpo_fs *fs, gpo_dr_user *u)
{
    memset(u, 0, sizeof *u);
    if (gpo_fs_is_recorded(fs))
        read_recorded(fs, u);
    else
        read_live(u);
    if (!u->name[0] && u->known)
        gpo_snprintf(u->name, sizeof u->name, "uid %lu", (unsigned long)u->uid);
    if (!u->known)
        gpo_strlcpy(u->name, "this user", sizeof u->name);
}

int gpo_dr_user_in_group(const gpo_dr_user *u, gid_t gid)
{
    if (u->gid == gid)
        return 1;
    for (size_t i = 0; i < u->n_groups; i++)
        if (u->groups[i] == gid)
            return 1;
    return 0;
}

/* getgrgid_r with a buffer that grows for groups with long member lists. */
static int live_group(gid_t gid, int (*fn)(const struct group *g, void *arg), void *arg)
{
    size_t cap = 4096;
    int result = -1;
    for (;;) {
        char *buf = malloc(cap);
        if (!buf)
            return -1;
        struct group g, *res = NULL;
        int e = getgrgid_r(gid, &g, buf, cap, &res);
        if (e == ERANGE && cap < (1u << 20)) {
            free(buf);
            cap *= 4;
            continue;
        }
        if (e == 0 && res)
            result = fn(res, arg);
        free(buf);
        return result;
    }
}

static int copy_group_name(const struct group *g, void *arg)
{
    lookup *l = arg;
    gpo_strlcpy(l->out, g->gr_name, l->cap);
    return 1;
}

static int live_has_member(const struct group *g, void *arg)
{
    const char *user = arg;
    for (char **m = g->gr_mem; m && *m; m++)
        if (strcmp(*m, user) == 0)
            return 1;
    return 0;
}

void gpo_dr_group_name(const gpo_fs *fs, gid_t gid, char *out, size_t cap)
{
    lookup l = {gid, NULL, out, cap, 0, 0};
    int found;
    if (gpo_fs_is_recorded(fs))
        found = each_line(fs, "/etc/group", 4, group_by_gid, &l) == 1;
    else
        found = live_group(gid, copy_group_name, &l) == 1;
    if (!found)
        gpo_snprintf(out, cap, "gid %lu", (unsigned long)gid);
}

int gpo_dr_group_lists_user(const gpo_fs *fs, gid_t gid, const char *user)
{
    if (!user || !*user || strncmp(user, "uid ", 4) == 0)
        return -1;
    if (gpo_fs_is_recorded(fs)) {
        /* The primary group in /etc/passwd counts as membership too. */
        lookup l = {gid, user, NULL, 0, 0, 0};
        if (each_line(fs, "/etc/passwd", 4, passwd_by_name, &l) == 1 && l.primary == gid)
            return 1;
        l.found = 0;
        int r = each_line(fs, "/etc/group", 4, group_has_member, &l);
        if (r < 0)
            return -1;
        return r == 2 ? 1 : 0;
    }
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwnam_r(user, &pw, buf, sizeof buf, &res) == 0 && res && res->pw_gid == gid)
        return 1;
    int r = live_group(gid, live_has_member, (void *)user);
    return r < 0 ? -1 : r;
}

void gpo_dr_user_groups_text(const gpo_fs *fs, const gpo_dr_user *u, char *out, size_t cap)
{
    char name[64];
    size_t used = 0;
    gid_t seen[GPO_DR_MAX_GROUPS + 1];
    size_t n_seen = 0;
    out[0] = '\0';
    for (size_t i = 0; i <= u->n_groups; i++) {
        gid_t g = i == 0 ? u->gid : u->groups[i - 1];
        int dup = 0;
        for (size_t k = 0; k < n_seen; k++)
            dup |= seen[k] == g;
        if (dup)
            continue;
        seen[n_seen++] = g;
        gpo_dr_group_name(fs, g, name, sizeof name);
        gpo_snprintf(out + used, cap - used, "%s%s(%lu)", used ? ", " : "", name, (unsigned long)g);
        used = strlen(out);
    }
}
