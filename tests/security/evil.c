/* The attacker's "vendor library": loading it leaves a mark. The setuid
 * test names it in every library variable and config file; the mark must
 * never appear when the loader is privileged. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void mark(void)
{
    const char *path = getenv("GPO_EVIL_MARK");
    if (path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0)
            close(fd);
    }
}
