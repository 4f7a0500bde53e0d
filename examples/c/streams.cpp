// A stream runtime in the style of 2007 CTM clients: the larger system
// arena for everything the host writes (command buffer, program, constants,
// parameters, a staging buffer), streams bump-allocated in local memory
// that only the DPP touches, uploads and read-backs by a copy shader, and a
// kernel of its own — all ps_3_0 through the SDK's compiler.
//
//   c++ -std=c++98 streams.cpp -I../../include -L../../target/release -lctm -o streams
//   ./streams
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "amDeviceManaged.h"
#include "amuComp.h"
#include "amuABI.h"
#include "amuCbufPack.h"
#include "amuCbufTypes.h"
#include "amuAsm.h"
#include "ctm.h"

namespace {

const char copyShader[] =
    "    ps_3_0\n"
    "    dcl vPos.xy\n"
    "    dcl_2d s0\n"
    "    texld r0, vPos, s0\n"
    "    mov oC0.xyzw, r0\n"
    "    end\n";

// out = a * x + y with x and y read through interpolated coordinates.
const char saxpyShader[] =
    "    ps_3_0\n"
    "    dcl_texcoord0 v0.xy\n"
    "    dcl_texcoord1 v1.xy\n"
    "    dcl_2d s0\n"
    "    dcl_2d s1\n"
    "    def c1, 0, 0, 0, 0\n"
    "    texld r0, v0, s0\n"
    "    texld r1, v1, s1\n"
    "    mad oC0, r0, c0.x, r1\n"
    "    end\n";

struct Program {
    AMuint32 size;
    void *binary;
    AMUabiConstsInfo constants;
};

struct Stream {
    AMuint32 gpu;
    unsigned width, height; // padded to 16
};

class Runtime {
public:
    bool open();
    bool compile(const char *source, Program &p);
    Stream create(unsigned width, unsigned height);
    bool upload(const Stream &s, const float *data, unsigned w, unsigned h);
    bool download(const Stream &s, float *data, unsigned w, unsigned h);
    bool saxpy(const Stream &out, const Stream &x, const Stream &y, float a, unsigned w, unsigned h);
    void close() { amCloseManagedConnection(vm); }
    const char *engine() const { return ctmGetEngine(vm); }

private:
    bool run(const Program &p, const Stream *inputs, unsigned count, AMuint32 outAddr,
             AMUcbufFldTiling outTiling, unsigned w, unsigned h, unsigned pitch, unsigned rows,
             AMuint32 inAddr, AMUcbufFldTiling inTiling);
    void *cpu(AMuint32 addrSYS) const
    {
        // CPU pointers relative to the uncached base, as 2007 clients did.
        return (cached ? (unsigned char *)info.baseAddressCPUc : (unsigned char *)info.baseAddressCPU) +
               addrSYS - info.baseAddressSYS;
    }
    AMuint32 align(AMuint32 a) const { return (a + 2047) & ~2047u; }
    void setLiterals(const AMUabiConstsInfo &c);

    AMmanagedDeviceInfo info;
    AMmanagedDevice vm;
    AMUcompCompiler comp;
    bool cached;
    AMuint32 baseSYS, cbufSYS, programSYS, fconstSYS, iconstSYS, paramsSYS, bufferSYS;
    AMuint32 currentGPU;
    Program copy, kernel;
};

bool Runtime::open()
{
    AMmanagedDeviceInfo zero = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    info = zero;
    vm = amOpenManagedConnection("/dev/pcie0", &info);
    if (vm == NULL)
        return false;
    std::printf("GPU Memory available: %dMB, SYS %dMB, SYSc %dMB\n", info.arenaSizeGPU / (1024 * 1024),
                info.arenaSizeSYS / (1024 * 1024), info.arenaSizeSYSc / (1024 * 1024));
    cached = info.arenaSizeSYSc > info.arenaSizeSYS;
    baseSYS = cached ? info.baseAddressSYSc : info.baseAddressSYS;
    cbufSYS = baseSYS;
    programSYS = baseSYS + 1 * 1024 * 1024;
    fconstSYS = baseSYS + 2 * 1024 * 1024;
    iconstSYS = baseSYS + 3 * 1024 * 1024;
    paramsSYS = baseSYS + 4 * 1024 * 1024;
    bufferSYS = align(baseSYS + 5 * 1024 * 1024);
    currentGPU = info.baseAddressGPU;
    comp = amuCompOpenCompiler();
    return compile(copyShader, copy) && compile(saxpyShader, kernel);
}

void logLine(const char *message) { std::fputs(message, stderr); }

bool Runtime::compile(const char *source, Program &p)
{
    AMUcompMacro defines[] = {{"AMU_LANG_PS3", "1"}, {0, 0}};
    if (amuCompCompile(comp, source, (unsigned int)std::strlen(source), defines, NULL, "main", &p.size,
                       &p.binary, logLine) == 0)
        return false;
    p.constants = amuABIExtractConstants(p.binary);
    return true;
}

// The literals by hand, as some clients wrote them instead of calling
// amuABISetLiteralConstants.
void Runtime::setLiterals(const AMUabiConstsInfo &c)
{
    for (unsigned int k = 0; k < c.litConstsCount; k++) {
        switch (c.litConsts[k].type) {
        case AMU_ABI_FLOAT32: {
            float *to = (float *)cpu(fconstSYS) + 4 * c.litConsts[k].addr;
            const float *from = c.litConsts[k].value.float32;
            to[0] = from[0]; to[1] = from[1]; to[2] = from[2]; to[3] = from[3];
            break;
        }
        case AMU_ABI_INT32: {
            unsigned char *to = (unsigned char *)cpu(iconstSYS) + 4 * c.litConsts[k].addr;
            const unsigned int *from = c.litConsts[k].value.int32;
            to[0] = (unsigned char)from[0]; to[1] = (unsigned char)from[1];
            to[2] = (unsigned char)from[2]; to[3] = (unsigned char)from[3];
            break;
        }
        default:
            break;
        }
    }
}

Stream Runtime::create(unsigned width, unsigned height)
{
    Stream s;
    s.width = (width + 15) & ~15u;
    s.height = (height + 15) & ~15u;
    s.gpu = currentGPU;
    currentGPU = align(currentGPU + s.width * s.height * 16 + 8192);
    return s;
}

bool Runtime::run(const Program &p, const Stream *inputs, unsigned count, AMuint32 outAddr,
                  AMUcbufFldTiling outTiling, unsigned w, unsigned h, unsigned pitch, unsigned rows,
                  AMuint32 inAddr, AMUcbufFldTiling inTiling)
{
    AMUcbufPack *cbp = new AMUcbufPack((unsigned int *)cpu(cbufSYS), 1024 * 256);
    setLiterals(p.constants);
    cbp->appendFlushOutCache();
    cbp->appendFlushCondOutCache();
    if (count == 0)
        cbp->appendSetInpFmt(0, inAddr, AMU_CBUF_FLD_FORMAT_FLOAT32_4, inTiling, pitch, rows);
    for (unsigned i = 0; i < count; i++)
        cbp->appendSetInpFmt(i, inputs[i].gpu, AMU_CBUF_FLD_FORMAT_FLOAT32_4, AMU_CBUF_FLD_TILING_TILED0,
                             inputs[i].width, inputs[i].height);
    cbp->appendSetOutFmt(0, outAddr, AMU_CBUF_FLD_FORMAT_FLOAT32_4, outTiling, pitch, rows);
    cbp->appendInvInpCache();
    cbp->appendInvCondOutCache();
    std::memcpy(cpu(programSYS), p.binary, p.size);
    cbp->appendSetInstFmt(programSYS, 0, 0, 0);
    cbp->appendInvInstCache();
    cbp->appendSetConstfFmt(fconstSYS, 0, 0, 0);
    cbp->appendInvConstfCache();
    cbp->appendSetConstiFmt(iconstSYS, 0, 0, 0);
    cbp->appendInvConstiCache();
    cbp->appendSetDomain(0, 0, w - 1, h - 1);
    // Interpolants: a triangle three times the output, texel coordinates
    // biased to land inside each texel.
    float *params = (float *)cpu(paramsSYS);
    const float bias = -0.5f + 0.05f;
    const float xs[3] = {0, 3.0f * w, 0}, ys[3] = {0, 0, 3.0f * h};
    for (int v = 0; v < 3; v++) {
        float *q = params + 32 * v;
        q[0] = xs[v]; q[1] = ys[v]; q[2] = 0; q[3] = 1;
        for (int t = 1; t < 8; t++) {
            q[4 * t] = xs[v] + bias; q[4 * t + 1] = ys[v] + bias; q[4 * t + 2] = 0; q[4 * t + 3] = 1;
        }
    }
    cbp->appendSetParams(paramsSYS);
    cbp->appendStartProgram();
    cbp->appendFlushOutCache();
    cbp->appendFlushCondOutCache();
    AMuint32 size = cbp->getCommandBufferSize();
    bool packed = !cbp->failed();
    delete cbp;
    if (!packed)
        return false;
    unsigned int id = amSubmitCommandBuffer(vm, cbufSYS, size);
    while (amCommandBufferConsumed(vm, id) == 0) {
    }
    return id != 0 && ctmGetBufferStatus(vm, id) == CTM_BUFFER_DONE;
}

bool Runtime::upload(const Stream &s, const float *data, unsigned w, unsigned h)
{
    float *staging = (float *)cpu(bufferSYS);
    std::memset(staging, 0, s.width * s.height * 16);
    for (unsigned y = 0; y < h; y++)
        std::memcpy(staging + 4 * y * s.width, data + 4 * y * w, w * 16);
    return run(copy, 0, 0, s.gpu, AMU_CBUF_FLD_TILING_TILED0, s.width, s.height, s.width, s.height,
               bufferSYS, AMU_CBUF_FLD_TILING_LINEAR);
}

bool Runtime::download(const Stream &s, float *data, unsigned w, unsigned h)
{
    if (!run(copy, 0, 0, bufferSYS, AMU_CBUF_FLD_TILING_LINEAR, s.width, s.height, s.width, s.height, s.gpu,
             AMU_CBUF_FLD_TILING_TILED0))
        return false;
    const float *staging = (const float *)cpu(bufferSYS);
    for (unsigned y = 0; y < h; y++)
        std::memcpy(data + 4 * y * w, staging + 4 * y * s.width, w * 16);
    return true;
}

bool Runtime::saxpy(const Stream &out, const Stream &x, const Stream &y, float a, unsigned w, unsigned h)
{
    float *c0 = (float *)cpu(fconstSYS);
    c0[0] = a; c0[1] = 0; c0[2] = 0; c0[3] = 0;
    Stream in[2] = {x, y};
    return run(kernel, in, 2, out.gpu, AMU_CBUF_FLD_TILING_TILED0, w, h, out.width, out.height, 0,
               AMU_CBUF_FLD_TILING_LINEAR);
}

} // namespace

int main()
{
    const unsigned W = 37, H = 21; // not multiples of 16: streams are padded
    Runtime rt;
    if (!rt.open()) {
        std::fprintf(stderr, "streams: %s\n", ctmGetLastError());
        return 1;
    }
    float *x = new float[W * H * 4], *y = new float[W * H * 4], *r = new float[W * H * 4];
    for (unsigned k = 0; k < W * H * 4; k++) {
        x[k] = (float)(k % 97) - 40.0f;
        y[k] = (float)(k % 13) * 0.25f;
    }
    Stream sx = rt.create(W, H), sy = rt.create(W, H), sr = rt.create(W, H);
    if (!rt.upload(sx, x, W, H) || !rt.upload(sy, y, W, H) || !rt.saxpy(sr, sx, sy, 3.0f, W, H) ||
        !rt.download(sr, r, W, H)) {
        std::fprintf(stderr, "streams: a buffer failed: %s\n", ctmGetLastError());
        return 1;
    }
    unsigned wrong = 0;
    for (unsigned k = 0; k < W * H * 4; k++) {
        volatile float p = 3.0f * x[k];
        if (r[k] != p + y[k])
            wrong++;
    }
    // Reading x back through the copy shader gives x again.
    float *back = new float[W * H * 4];
    if (!rt.download(sx, back, W, H) || std::memcmp(back, x, W * H * 16) != 0)
        wrong++;
    std::printf("streams %ux%u on %s: %u of %u values wrong\n", W, H, rt.engine(), wrong, W * H * 4);
    rt.close();
    delete[] x;
    delete[] y;
    delete[] r;
    delete[] back;
    return wrong != 0;
}
