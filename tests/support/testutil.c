#include "testutil.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "context.h"
#include "synthetic.h"

void capture_log(int32_t level, const char *message, void *user)
{
    log_capture *c = user;
    int n = snprintf(c->text + c->len, sizeof c->text - c->len, "%d:%s\n", (int)level, message);
    if (n > 0 && c->len + (size_t)n < sizeof c->text)
        c->len += (size_t)n;
    c->count++;
}

const char *write_temp_file(int slot, const char *name, const char *content)
{
    static char paths[4][512];
    char dir[256];
    snprintf(dir, sizeof dir, "%s/tests/tmp-%d", GPO_BUILD_DIR, (int)getpid());
    mkdir(dir, 0700);
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", dir, name);
    FILE *f = fopen(paths[slot], "wb");
    if (f) {
        fputs(content, f);
        fclose(f);
    }
    return paths[slot];
}

gpuopt_status syn_context(const char *backends, const char *config_path, log_capture *log,
                          gpuopt_context **ctx)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.backends = backends;
    if (config_path)
        o.config_path = config_path;
    else
        o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    if (log) {
        o.log_fn = capture_log;
        o.log_user = log;
    }
    return gpo_context_create_with(&o, syn_list, 3, ctx);
}
