// The Mandelbrot kernel (examples/mandelbrot.s) through the CTM host
// interface from C++, with the SDK's AMUcbufPack class.
//
//   c++ -std=c++98 mandelbrot.cpp -I../../include -L../../target/release -lctm -o mandelbrot
//   ./mandelbrot ../mandelbrot.s [OUT.f32 [WIDTH HEIGHT]]   (768 x 512 by default)
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "amDeviceManaged.h"
#include "amuAsm.h"
#include "amuCbufPack.h"
#include "ctm.h"

namespace {

unsigned W = 768, H = 512;
const unsigned MIB = 1024 * 1024;
unsigned listed = 0;

void count_line(const char *) { listed++; }
void print_line(const char *line) { std::fputs(line, stderr); }

char *read_file(const char *path, unsigned *length)
{
    std::FILE *f = std::fopen(path, "rb");
    if (!f)
        return 0;
    std::fseek(f, 0, SEEK_END);
    long n = std::ftell(f);
    std::fseek(f, 0, SEEK_SET);
    char *text = static_cast<char *>(std::malloc(n > 0 ? n : 1));
    if (!text || std::fread(text, 1, n, f) != static_cast<size_t>(n)) {
        std::fclose(f);
        std::free(text);
        return 0;
    }
    std::fclose(f);
    *length = static_cast<unsigned>(n);
    return text;
}

int fail(const char *what)
{
    std::fprintf(stderr, "mandelbrot: %s: %s\n", what, ctmGetLastError());
    return 1;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: mandelbrot PROGRAM.s [OUT.f32 [WIDTH HEIGHT]]\n");
        return 2;
    }
    if (argc > 4) {
        W = static_cast<unsigned>(std::atoi(argv[3]));
        H = static_cast<unsigned>(std::atoi(argv[4]));
        if (W < 4 || W > 1024 || W % 4 != 0 || H < 1 || H > 1024) {
            std::fprintf(stderr, "mandelbrot: WIDTH a multiple of 4 in 4..1024, HEIGHT 1..1024\n");
            return 2;
        }
    }
    unsigned length = 0;
    char *source = read_file(argv[1], &length);
    if (!source) {
        std::fprintf(stderr, "mandelbrot: cannot read %s\n", argv[1]);
        return 1;
    }

    AMmanagedDeviceInfo info = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    AMmanagedDevice dev = amOpenManagedConnection("/dev/pcie0", &info);
    if (!dev)
        return fail("opening the board");
    bool cached = info.arenaSizeSYSc > info.arenaSizeSYS;
    AMuint32 base = cached ? info.baseAddressSYSc : info.baseAddressSYS;
    unsigned char *cpu = static_cast<unsigned char *>(cached ? info.baseAddressCPUc : info.baseAddressCPU);
    AMuint32 cbuf = base, prog = base + 1 * MIB, constf = base + 2 * MIB, consti = base + 3 * MIB;
    AMuint32 out = base + 4 * MIB;

    void *binary = 0;
    AMuint32 size = 0;
    if (!amuAsmAssemble(source, length, &size, &binary, print_line))
        return fail("assembling");
    std::free(source);
    if (!amuAsmDisassemble(binary, count_line))
        return fail("disassembling");
    std::memcpy(cpu + (prog - base), binary, size);
    std::free(binary);

    // c0 = pixel step, c1 = top-left corner, c2 = palette; i0 = 255 steps.
    const float c[12] = {0.00390625f, 0.0048828125f, 0, 0, -2.25f, -1.25f, 0, 0,
                         0.031f, 0.047f, 0.071f, 0};
    std::memcpy(cpu + (constf - base), c, sizeof c);
    const unsigned char i0[4] = {255, 0, 0, 0};
    std::memcpy(cpu + (consti - base), i0, sizeof i0);

    AMUcbufPack *cbp = new AMUcbufPack(reinterpret_cast<unsigned int *>(cpu + (cbuf - base)), 256 * 1024);
    cbp->appendSetInstFmt(prog, 0, 0, 0);
    cbp->appendInvInstCache();
    cbp->appendSetConstfFmt(constf, 0, 0, 0);
    cbp->appendInvConstfCache();
    cbp->appendSetConstiFmt(consti, 0, 0, 0);
    cbp->appendInvConstiCache();
    cbp->appendSetOutFmt(0, out, AMU_CBUF_FLD_FORMAT_FLOAT32_4, AMU_CBUF_FLD_TILING_TILED0, W, H);
    cbp->appendSetDomain(0, 0, W - 1, H - 1);
    cbp->appendStartProgram();
    cbp->appendFlushOutCache();
    if (cbp->failed())
        return fail("packing");
    AMuint32 bytes = cbp->getCommandBufferSize();
    delete cbp;

    AMuint32 id = amSubmitCommandBuffer(dev, cbuf, bytes);
    if (!id)
        return fail("submitting");
    if (!ctmWaitBuffer(dev, id))
        return fail("running");

    const float *px = reinterpret_cast<const float *>(cpu + (out - base));
    // A fingerprint of the picture (FNV-1a over its bytes).
    unsigned hash = 2166136261u;
    const unsigned char *b = cpu + (out - base);
    for (unsigned k = 0; k < W * H * 16; k++)
        hash = (hash ^ b[k]) * 16777619u;
    if (argc > 2) {
        std::FILE *f = std::fopen(argv[2], "wb");
        if (!f || std::fwrite(px, 16, W * H, f) != W * H || std::fclose(f) != 0) {
            std::fprintf(stderr, "mandelbrot: cannot write %s\n", argv[2]);
            return 1;
        }
    }
    std::printf("mandelbrot %ux%u on %s: %u instructions, picture %08x\n", W, H,
                ctmGetEngine(dev), listed, hash);
    amCloseManagedConnection(dev);
    return 0;
}
