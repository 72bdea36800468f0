/* Test helper: small /proc and /sys trees written at run time, for the
 * malformed and missing-file cases that no real machine records. Each tree
 * lives in a fresh mkdtemp directory removed by tree_free. */
#ifndef GPO_TEST_CPU_TREE_H
#define GPO_TEST_CPU_TREE_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct test_tree {
    char root[256];
} test_tree;

static int tree_mkdirs(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    }
    return mkdir(buf, 0755) == 0 || access(buf, F_OK) == 0 ? 0 : -1;
}

/* A new empty tree; returns 0 or -1. */
static int tree_new(test_tree *t)
{
    snprintf(t->root, sizeof t->root, "/tmp/gpuopt-cpu-XXXXXX");
    return mkdtemp(t->root) ? 0 : -1;
}

/* Writes `text` to root + path, creating directories. */
static int tree_write(const test_tree *t, const char *path, const char *text)
{
    char full[1024];
    snprintf(full, sizeof full, "%s%s", t->root, path);
    char *slash = strrchr(full, '/');
    *slash = '\0';
    if (tree_mkdirs(full))
        return -1;
    *slash = '/';
    FILE *f = fopen(full, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static int tree_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void tree_free(test_tree *t)
{
    if (t->root[0])
        nftw(t->root, tree_rm_one, 16, FTW_DEPTH | FTW_PHYS);
    t->root[0] = '\0';
}

#endif
