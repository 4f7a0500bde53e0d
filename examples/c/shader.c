/*
 * A ps_3_0 kernel through the SDK's compiler, as CTM applications ran
 * them: amuCompCompile in the SDK's dialect (texel coordinates, v0 from
 * interpolants), constants set by name and the shader's literals written
 * with amuABI, interpolants through set_params, the program copied to
 * program memory.
 *
 *   cc -std=c99 shader.c -I../../include -L../../target/release -lctm -o shader
 *   ./shader SHADER [OUT.f32]
 *
 * SHADER (text or bytecode) reads texture s0 at v0 and at vPos and writes
 * oC0; the constant named "scale", if the shader's constant table has one,
 * is set to 2. v0 is set up to read the texel to the right of the pixel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amDeviceManaged.h"
#include "amuABI.h"
#include "amuAsm.h"
#include "amuCbufPack.h"
#include "amuComp.h"
#include "ctm.h"

#define W 16
#define H 8
#define MIB (1024u * 1024u)

static unsigned lines = 0;
static void count_line(const char *line) { (void)line; lines++; }
static void print_line(const char *line) { fputs(line, stderr); }

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: shader SHADER [OUT.f32]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    static char source[1 << 16];
    size_t length = f ? fread(source, 1, sizeof source, f) : 0;
    if (!f || length == 0 || length == sizeof source) {
        fprintf(stderr, "shader: cannot read %s\n", argv[1]);
        return 1;
    }
    fclose(f);

    AMmanagedDeviceInfo info = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    AMmanagedDevice dev = amOpenManagedConnection("/dev/pcie0", &info);
    if (!dev) {
        fprintf(stderr, "shader: %s\n", ctmGetLastError());
        return 1;
    }
    int cached = info.arenaSizeSYSc > info.arenaSizeSYS;
    AMuint32 base = cached ? info.baseAddressSYSc : info.baseAddressSYS;
    unsigned char *cpu = (unsigned char *)(cached ? info.baseAddressCPUc : info.baseAddressCPU);
    AMuint32 cbuf = base, prog = base + 1 * MIB, constf = base + 2 * MIB, consti = base + 3 * MIB;
    AMuint32 params = base + 4 * MIB, tex = base + 5 * MIB, out = tex + W * H * 16;

    AMUcompCompiler comp = amuCompOpenCompiler();
    AMUcompMacro defines[] = {{"AMU_LANG_PS3", "1"}, {0, 0}};
    void *binary = NULL;
    AMuint32 size = 0;
    if (!amuCompCompile(comp, source, (AMuint32)length, defines, NULL, "main", &size, &binary, print_line)) {
        fprintf(stderr, "shader: %s\n", ctmGetLastError());
        return 1;
    }
    amuAsmDisassemble(binary, count_line);
    memcpy(cpu + (prog - base), binary, size);

    /* Constants: by name first, then the shader's literals. */
    AMUabiConstsInfo consts = amuABIExtractConstants(binary);
    float *cf = (float *)(cpu + (constf - base));
    for (AMuint32 u = 0; u < consts.userConstsCount; u++) {
        if (strcmp(consts.userConsts[u].name.str, "scale") == 0 && consts.userConsts[u].type == AMU_ABI_FLOAT32) {
            float *c = &cf[4 * consts.userConsts[u].addr];
            c[0] = c[1] = c[2] = c[3] = 2.0f;
        }
    }
    amuABISetLiteralConstants(consts, cf, cpu + (consti - base), NULL);

    /* The texture: texel (x, y) = (x, y, x + y, 1). */
    float *t = (float *)(cpu + (tex - base));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float *e = &t[4 * (y * W + x)];
            e[0] = (float)x; e[1] = (float)y; e[2] = (float)(x + y); e[3] = 1.0f;
        }

    /* Interpolants as the SDK's client set them: a triangle three times
     * the domain; v0 at each vertex is its position biased by -0.45 and
     * shifted one texel right, so pixel (i, j) reads texel (i + 1, j). */
    float *p = (float *)(cpu + (params - base));
    const float vx[3] = {0, 3 * W, 0}, vy[3] = {0, 0, 3 * H};
    for (int v = 0; v < 3; v++) {
        float *q = &p[32 * v];
        q[0] = vx[v]; q[1] = vy[v]; q[2] = 0; q[3] = 1;
        q[4] = vx[v] + 1.0f - 0.45f; q[5] = vy[v] - 0.45f; q[6] = 0; q[7] = 1;
    }

    AMUcbufPackState pack;
    amuCbufPackInit(&pack, (unsigned int *)(cpu + (cbuf - base)), 4096);
    amuCbufPackAppendSetInstFmt(&pack, prog, 0, 0, 0);
    amuCbufPackAppendInvInstCache(&pack);
    amuCbufPackAppendSetConstfFmt(&pack, constf, 0, 0, 0);
    amuCbufPackAppendInvConstfCache(&pack);
    amuCbufPackAppendSetConstiFmt(&pack, consti, 0, 0, 0);
    amuCbufPackAppendInvConstiCache(&pack);
    amuCbufPackAppendSetInpFmt(&pack, 0, tex, AMU_CBUF_FLD_FORMAT_FLOAT32_4, AMU_CBUF_FLD_TILING_TILED0, W, H);
    amuCbufPackAppendInvInpCache(&pack);
    amuCbufPackAppendSetOutFmt(&pack, 0, out, AMU_CBUF_FLD_FORMAT_FLOAT32_4, AMU_CBUF_FLD_TILING_TILED0, W, H);
    amuCbufPackAppendSetDomain(&pack, 0, 0, W - 1, H - 1);
    amuCbufPackAppendSetParams(&pack, params);
    amuCbufPackAppendStartProgram(&pack);
    amuCbufPackAppendFlushOutCache(&pack);
    if (amuCbufPackFailed(&pack)) {
        fprintf(stderr, "shader: packing: %s\n", ctmGetLastError());
        return 1;
    }
    AMuint32 id = amSubmitCommandBuffer(dev, cbuf, amuCbufPackGetCommandBufferSize(&pack));
    while (!amCommandBufferConsumed(dev, id)) {
    }
    if (ctmGetBufferStatus(dev, id) != CTM_BUFFER_DONE) {
        fprintf(stderr, "shader: %s\n", id ? ctmGetBufferFault(dev, id) : ctmGetLastError());
        return 1;
    }
    if (argc > 2) {
        FILE *o = fopen(argv[2], "wb");
        if (!o || fwrite(cpu + (out - base), 16, W * H, o) != W * H || fclose(o) != 0) {
            fprintf(stderr, "shader: cannot write %s\n", argv[2]);
            return 1;
        }
    }
    printf("shader %dx%d on %s: %u DPP instructions, %u user and %u literal constants\n", W, H,
           ctmGetEngine(dev), lines, consts.userConstsCount, consts.litConstsCount);
    amuABIFreeConstants(consts);
    free(binary);
    amuCompCloseCompiler(comp);
    amCloseManagedConnection(dev);
    return 0;
}
