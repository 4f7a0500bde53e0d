/*
 * The cost of the C interface: one amSubmitCommandBuffer round trip (submit,
 * poll until consumed) of a one-instruction kernel over 64 x 64 pairs with
 * the program resident, and the same kernel over 512 x 512 in ns per pixel
 * (first run, then the best of runs 2..N). Prints one line per figure.
 *
 *   cc -std=c99 -O2 submit_bench.c -I../../include -L../../target/release -lctm -o submit_bench
 *   ./submit_bench [ROUNDS]     (64 x 64 round trips; at most 20 runs of 512 x 512)
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amDeviceManaged.h"
#include "amuAsm.h"
#include "amuCbufPack.h"
#include "ctm.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One buffer: program, output, domain, start, flush. */
static AMuint32 pack(unsigned char *cpu, AMuint32 prog, AMuint32 out, unsigned n)
{
    AMUcbufPackState p;
    amuCbufPackInit(&p, (unsigned int *)cpu, 4096);
    amuCbufPackAppendSetInstFmt(&p, prog, 0, 0, 0);
    amuCbufPackAppendSetOutFmt(&p, 0, out, AMU_CBUF_FLD_FORMAT_FLOAT32_4, AMU_CBUF_FLD_TILING_LINEAR, n, n);
    amuCbufPackAppendSetDomain(&p, 0, 0, n - 1, n - 1);
    amuCbufPackAppendStartProgram(&p);
    amuCbufPackAppendFlushOutCache(&p);
    return amuCbufPackFailed(&p) ? 0 : amuCbufPackGetCommandBufferSize(&p);
}

static int submit(AMmanagedDevice dev, AMuint32 addr, AMuint32 size)
{
    AMuint32 id = amSubmitCommandBuffer(dev, addr, size);
    while (!amCommandBufferConsumed(dev, id)) {
    }
    return id != 0 && ctmGetBufferStatus(dev, id) == CTM_BUFFER_DONE;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 2000;
    if (rounds < 2)
        rounds = 2;
    AMmanagedDeviceInfo info = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    AMmanagedDevice dev = amOpenManagedConnection("/dev/pcie0", &info);
    if (!dev) {
        fprintf(stderr, "submit_bench: %s\n", ctmGetLastError());
        return 1;
    }
    unsigned char *cpu = (unsigned char *)info.baseAddressCPU;
    AMuint32 base = info.baseAddressSYS, prog = base + 0x10000, out = base + 0x100000;
    void *binary = NULL;
    AMuint32 size = 0;
    if (!amuAsmAssemble("out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last", 0,
                        &size, &binary, NULL)) {
        fprintf(stderr, "submit_bench: %s\n", ctmGetLastError());
        return 1;
    }
    memcpy(cpu + (prog - base), binary, size);
    free(binary);

    /* Round trips of a 64 x 64 run. */
    AMuint32 bytes = pack(cpu, prog, out, 64);
    double first = now();
    if (!submit(dev, base, bytes))
        return 1;
    first = now() - first;
    double t = now();
    for (int k = 1; k < rounds; k++)
        if (!submit(dev, base, bytes))
            return 1;
    double each = (now() - t) / (rounds - 1);
    printf("round trip 64x64: first %.1f us, then %.1f us (%.2f ns/pixel)\n", first * 1e6, each * 1e6,
           each * 1e9 / 4096);

    /* 512 x 512. */
    bytes = pack(cpu, prog, out, 512);
    double t512 = now();
    if (!submit(dev, base, bytes))
        return 1;
    t512 = now() - t512;
    double best = 1e9;
    for (int k = 0; k < (rounds < 20 ? rounds : 20); k++) {
        double s = now();
        if (!submit(dev, base, bytes))
            return 1;
        s = now() - s;
        if (s < best)
            best = s;
    }
    printf("512x512: first %.2f ns/pixel, runs 2..N best %.2f ns/pixel on %s\n", t512 * 1e9 / 262144.0,
           best * 1e9 / 262144.0, ctmGetEngine(dev));
    amCloseManagedConnection(dev);
    return 0;
}
