/* The floor of probing vendor GPU libraries on a machine without GPUs: a
 * program that only dlopens each named library (RTLD_NOW | RTLD_LOCAL, as
 * the backends do) and exits. Whatever gpuopt adds above this is ours.
 *
 *   bench_dlopen_floor LIB...   (a missing library is not an error: that
 *                                failed lookup is part of the floor too) */
#include <dlfcn.h>

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        (void)dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    return 0;
}
