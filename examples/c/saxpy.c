/*
 * SAXPY through the CTM host interface, as a CTM application of 2007 did it:
 * open the board, write a DPP program, constants, data and command words
 * straight into system memory through the CPU pointer, submit, poll, read
 * the results in place.
 *
 *   cc -std=c99 saxpy.c -I../../include -L../../target/release -lctm -o saxpy
 *   ./saxpy [OUT.f32]     (writes the W x H float32_4 result when given)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amDeviceManaged.h"
#include "amuAsm.h"
#include "amuCbufPack.h"
#include "ctm.h"

#define W 64
#define H 64
#define MIB (1024u * 1024u)

/* out0 = c0.r * x + y per channel; x from input 0, y from input 1. */
static const char program[] =
    "tex ld r1.rgba, in0.rgba, r0.rgba unscaled\n"
    "tex ld r2.rgba, in1.rgba, r0.rgba unscaled acquire wait\n"
    "alu r3.rgb = mad(s0.rrr, s1, s2) | r3.a = mad(s0.r, s1, s2) src0=c0 src1=r1 src2=r2 wait\n"
    "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r3 wait last\n";

static void print_line(const char *line) { fputs(line, stderr); }

int main(int argc, char **argv)
{
    AMmanagedDeviceInfo info = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    AMmanagedDevice dev = amOpenManagedConnection("/dev/pcie0", &info);
    if (dev == NULL) {
        fprintf(stderr, "saxpy: cannot open the board: %s\n", ctmGetLastError());
        return 1;
    }
    /* The larger system arena, and CPU pointers relative to its base. */
    int cached = info.arenaSizeSYSc > info.arenaSizeSYS;
    AMuint32 base = cached ? info.baseAddressSYSc : info.baseAddressSYS;
    unsigned char *cpu = (unsigned char *)(cached ? info.baseAddressCPUc : info.baseAddressCPU);

    AMuint32 cbuf = base, prog = base + 1 * MIB, constf = base + 2 * MIB;
    AMuint32 x = base + 4 * MIB, y = x + W * H * 16, out = y + W * H * 16;

    void *binary = NULL;
    AMuint32 size = 0;
    if (!amuAsmAssemble(program, 0, &size, &binary, print_line)) {
        fprintf(stderr, "saxpy: %s\n", ctmGetLastError());
        return 1;
    }
    memcpy(cpu + (prog - base), binary, size);
    free(binary);

    const float a = 2.5f;
    float *c = (float *)(cpu + (constf - base));
    c[0] = a; c[1] = 0; c[2] = 0; c[3] = 0;
    float *xs = (float *)(cpu + (x - base)), *ys = (float *)(cpu + (y - base));
    for (int k = 0; k < W * H * 4; k++) {
        xs[k] = (float)k * 0.25f - 100.0f;
        ys[k] = 1.0f / (float)(k + 1);
    }

    AMUcbufPackState pack;
    amuCbufPackInit(&pack, (unsigned int *)(cpu + (cbuf - base)), 64 * 1024);
    amuCbufPackAppendSetInstFmt(&pack, prog, 0, 0, 0);
    amuCbufPackAppendInvInstCache(&pack);
    amuCbufPackAppendSetConstfFmt(&pack, constf, 0, 0, 0);
    amuCbufPackAppendInvConstfCache(&pack);
    amuCbufPackAppendSetInpFmt(&pack, 0, x, AMU_CBUF_FLD_FORMAT_FLOAT32_4, AMU_CBUF_FLD_TILING_LINEAR, W, H);
    amuCbufPackAppendSetInpFmt(&pack, 1, y, AMU_CBUF_FLD_FORMAT_FLOAT32_4, AMU_CBUF_FLD_TILING_LINEAR, W, H);
    amuCbufPackAppendInvInpCache(&pack);
    amuCbufPackAppendSetOutFmt(&pack, 0, out, AMU_CBUF_FLD_FORMAT_FLOAT32_4, AMU_CBUF_FLD_TILING_LINEAR, W, H);
    amuCbufPackAppendSetDomain(&pack, 0, 0, W - 1, H - 1);
    amuCbufPackAppendStartProgram(&pack);
    amuCbufPackAppendFlushOutCache(&pack);
    if (amuCbufPackFailed(&pack)) {
        fprintf(stderr, "saxpy: packing: %s\n", ctmGetLastError());
        return 1;
    }

    AMuint32 id = amSubmitCommandBuffer(dev, cbuf, amuCbufPackGetCommandBufferSize(&pack));
    if (id == 0) {
        fprintf(stderr, "saxpy: submit: %s\n", ctmGetLastError());
        return 1;
    }
    while (amCommandBufferConsumed(dev, id) == 0) {
        /* the board works on its own; the host could do something else */
    }
    if (ctmGetBufferStatus(dev, id) != CTM_BUFFER_DONE) {
        fprintf(stderr, "saxpy: the buffer faulted: %s\n", ctmGetBufferFault(dev, id));
        return 1;
    }

    /* The DPP's MAD rounds the product, then the sum. */
    const float *r = (const float *)(cpu + (out - base));
    int wrong = 0;
    for (int k = 0; k < W * H * 4; k++) {
        volatile float p = a * xs[k];
        float want = p + ys[k];
        if (memcmp(&want, &r[k], sizeof want) != 0)
            wrong++;
    }
    if (argc > 1) {
        FILE *f = fopen(argv[1], "wb");
        if (f == NULL || fwrite(r, 16, W * H, f) != W * H || fclose(f) != 0) {
            fprintf(stderr, "saxpy: cannot write %s\n", argv[1]);
            return 1;
        }
    }
    printf("saxpy %dx%d on %s: %d of %d values differ from a*x+y\n", W, H, ctmGetEngine(dev), wrong,
           W * H * 4);
    amCloseManagedConnection(dev);
    return wrong != 0;
}
