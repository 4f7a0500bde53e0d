/*
 * amuCbufPack.h — command buffers packed in place, as C functions and as
 * the SDK's C++ class AMUcbufPack (header-only over them).
 * See docs/c-api.md §5; the packets are docs/machine.md §3.
 *
 * Every append writes one whole packet or nothing and returns non-zero on
 * success. An argument the packet cannot carry, or a packet past the
 * capacity, fails the append and marks the pack failed: later appends fail
 * too, and ctmGetLastError (ctm.h) says why. The size is always the bytes
 * of the whole packets written, ready for amSubmitCommandBuffer.
 */
#ifndef AMU_CBUF_PACK_H
#define AMU_CBUF_PACK_H

#include "amDeviceManaged.h"
#include "amuCbufTypes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A pack's state; fill it with amuCbufPackInit. */
typedef struct AMUcbufPackStateRec {
    unsigned int *buffer;
    unsigned int capacity; /* bytes */
    unsigned int used;     /* bytes */
    unsigned int failed;
} AMUcbufPackState;

void amuCbufPackInit(AMUcbufPackState *pack, unsigned int *buffer, unsigned int capacityBytes);
AMuint32 amuCbufPackGetCommandBufferSize(const AMUcbufPackState *pack);
AMuint32 amuCbufPackFailed(const AMUcbufPackState *pack);
void amuCbufPackReset(AMUcbufPackState *pack);

/* Surfaces: index, 2 KiB-aligned GPU address, AMU_CBUF_FLD_FORMAT_*,
 * AMU_CBUF_FLD_TILING_*, width (the pitch in elements: a multiple of 4, at
 * most 8188) and height in rows. */
AMuint32 amuCbufPackAppendSetInpFmt(AMUcbufPackState *pack, AMuint32 input, AMuint32 addr,
                                    AMuint32 format, AMuint32 tiling, AMuint32 width,
                                    AMuint32 height);
AMuint32 amuCbufPackAppendSetOutFmt(AMUcbufPackState *pack, AMuint32 output, AMuint32 addr,
                                    AMuint32 format, AMuint32 tiling, AMuint32 width,
                                    AMuint32 height);
AMuint32 amuCbufPackAppendSetCondOutFmt(AMUcbufPackState *pack, AMuint32 addr, AMuint32 format,
                                        AMuint32 tiling, AMuint32 width, AMuint32 height);
/* Program and constant memory: a 2 KiB-aligned GPU address; the format
 * word's fields are kept by the PE but not used (clients pass 0, 0, 0). */
AMuint32 amuCbufPackAppendSetInstFmt(AMUcbufPackState *pack, AMuint32 addr, AMuint32 format,
                                     AMuint32 tiling, AMuint32 width);
AMuint32 amuCbufPackAppendSetConstfFmt(AMUcbufPackState *pack, AMuint32 addr, AMuint32 format,
                                       AMuint32 tiling, AMuint32 width);
AMuint32 amuCbufPackAppendSetConstiFmt(AMUcbufPackState *pack, AMuint32 addr, AMuint32 format,
                                       AMuint32 tiling, AMuint32 width);
AMuint32 amuCbufPackAppendSetConstbFmt(AMUcbufPackState *pack, AMuint32 addr, AMuint32 format,
                                       AMuint32 tiling, AMuint32 width);
/* The domain, inclusive: pairs x0 <= i <= x1, y0 <= j <= y1. */
AMuint32 amuCbufPackAppendSetDomain(AMUcbufPackState *pack, AMuint32 x0, AMuint32 y0,
                                    AMuint32 x1, AMuint32 y1);
/* Where the interpolation parameters are: three vertices of 32 floats, a
 * position then seven float4 interpolants feeding v0-v6 of the SDK
 * compiler's shaders (docs/machine.md §6.1). */
AMuint32 amuCbufPackAppendSetParams(AMUcbufPackState *pack, AMuint32 addr);
AMuint32 amuCbufPackAppendStartProgram(AMUcbufPackState *pack);
AMuint32 amuCbufPackAppendSetCondVal(AMUcbufPackState *pack, float value);
AMuint32 amuCbufPackAppendSetCondTest(AMUcbufPackState *pack, AMuint32 test);
AMuint32 amuCbufPackAppendSetCondLoc(AMUcbufPackState *pack, AMuint32 location);
AMuint32 amuCbufPackAppendSetOutMask(AMUcbufPackState *pack, AMuint32 mask);
AMuint32 amuCbufPackAppendSetCondOutMask(AMUcbufPackState *pack, AMuint32 write);
AMuint32 amuCbufPackAppendInitPerfCounters(AMUcbufPackState *pack);
AMuint32 amuCbufPackAppendStartPerfCounters(AMUcbufPackState *pack);
AMuint32 amuCbufPackAppendStopPerfCounters(AMUcbufPackState *pack);
AMuint32 amuCbufPackAppendReadPerfCounters(AMUcbufPackState *pack, AMuint32 addr);
AMuint32 amuCbufPackAppendInvInstCache(AMUcbufPackState *pack);
AMuint32 amuCbufPackAppendInvConstfCache(AMUcbufPackState *pack);
AMuint32 amuCbufPackAppendInvConstiCache(AMUcbufPackState *pack);
AMuint32 amuCbufPackAppendInvConstbCache(AMUcbufPackState *pack);
AMuint32 amuCbufPackAppendInvInpCache(AMUcbufPackState *pack);
AMuint32 amuCbufPackAppendFlushOutCache(AMUcbufPackState *pack);
AMuint32 amuCbufPackAppendInvCondOutCache(AMUcbufPackState *pack);
AMuint32 amuCbufPackAppendFlushCondOutCache(AMUcbufPackState *pack);

#ifdef __cplusplus
}

/* The SDK's class: `new AMUcbufPack((unsigned int *)cpu, capacityBytes)`,
 * one append per command, getCommandBufferSize() in bytes. */
class AMUcbufPack {
public:
    AMUcbufPack(unsigned int *buffer, unsigned int capacityBytes)
    {
        amuCbufPackInit(&state_, buffer, capacityBytes);
    }

    AMuint32 getCommandBufferSize() const { return amuCbufPackGetCommandBufferSize(&state_); }
    bool failed() const { return amuCbufPackFailed(&state_) != 0; }
    void reset() { amuCbufPackReset(&state_); }

    AMuint32 appendSetInpFmt(AMuint32 input, AMuint32 addr, AMuint32 format, AMuint32 tiling,
                             AMuint32 width, AMuint32 height)
    {
        return amuCbufPackAppendSetInpFmt(&state_, input, addr, format, tiling, width, height);
    }
    AMuint32 appendSetOutFmt(AMuint32 output, AMuint32 addr, AMuint32 format, AMuint32 tiling,
                             AMuint32 width, AMuint32 height)
    {
        return amuCbufPackAppendSetOutFmt(&state_, output, addr, format, tiling, width, height);
    }
    AMuint32 appendSetCondOutFmt(AMuint32 addr, AMuint32 format, AMuint32 tiling, AMuint32 width,
                                 AMuint32 height)
    {
        return amuCbufPackAppendSetCondOutFmt(&state_, addr, format, tiling, width, height);
    }
    AMuint32 appendSetInstFmt(AMuint32 addr, AMuint32 format, AMuint32 tiling, AMuint32 width)
    {
        return amuCbufPackAppendSetInstFmt(&state_, addr, format, tiling, width);
    }
    AMuint32 appendSetConstfFmt(AMuint32 addr, AMuint32 format, AMuint32 tiling, AMuint32 width)
    {
        return amuCbufPackAppendSetConstfFmt(&state_, addr, format, tiling, width);
    }
    AMuint32 appendSetConstiFmt(AMuint32 addr, AMuint32 format, AMuint32 tiling, AMuint32 width)
    {
        return amuCbufPackAppendSetConstiFmt(&state_, addr, format, tiling, width);
    }
    AMuint32 appendSetConstbFmt(AMuint32 addr, AMuint32 format, AMuint32 tiling, AMuint32 width)
    {
        return amuCbufPackAppendSetConstbFmt(&state_, addr, format, tiling, width);
    }
    AMuint32 appendSetDomain(AMuint32 x0, AMuint32 y0, AMuint32 x1, AMuint32 y1)
    {
        return amuCbufPackAppendSetDomain(&state_, x0, y0, x1, y1);
    }
    AMuint32 appendSetParams(AMuint32 addr) { return amuCbufPackAppendSetParams(&state_, addr); }
    AMuint32 appendStartProgram() { return amuCbufPackAppendStartProgram(&state_); }
    AMuint32 appendSetCondVal(float value) { return amuCbufPackAppendSetCondVal(&state_, value); }
    AMuint32 appendSetCondTest(AMuint32 test) { return amuCbufPackAppendSetCondTest(&state_, test); }
    AMuint32 appendSetCondLoc(AMuint32 loc) { return amuCbufPackAppendSetCondLoc(&state_, loc); }
    AMuint32 appendSetOutMask(AMuint32 mask) { return amuCbufPackAppendSetOutMask(&state_, mask); }
    AMuint32 appendSetCondOutMask(AMuint32 write)
    {
        return amuCbufPackAppendSetCondOutMask(&state_, write);
    }
    AMuint32 appendInitPerfCounters() { return amuCbufPackAppendInitPerfCounters(&state_); }
    AMuint32 appendStartPerfCounters() { return amuCbufPackAppendStartPerfCounters(&state_); }
    AMuint32 appendStopPerfCounters() { return amuCbufPackAppendStopPerfCounters(&state_); }
    AMuint32 appendReadPerfCounters(AMuint32 addr)
    {
        return amuCbufPackAppendReadPerfCounters(&state_, addr);
    }
    AMuint32 appendInvInstCache() { return amuCbufPackAppendInvInstCache(&state_); }
    AMuint32 appendInvConstfCache() { return amuCbufPackAppendInvConstfCache(&state_); }
    AMuint32 appendInvConstiCache() { return amuCbufPackAppendInvConstiCache(&state_); }
    AMuint32 appendInvConstbCache() { return amuCbufPackAppendInvConstbCache(&state_); }
    AMuint32 appendInvInpCache() { return amuCbufPackAppendInvInpCache(&state_); }
    AMuint32 appendFlushOutCache() { return amuCbufPackAppendFlushOutCache(&state_); }
    AMuint32 appendInvCondOutCache() { return amuCbufPackAppendInvCondOutCache(&state_); }
    AMuint32 appendFlushCondOutCache() { return amuCbufPackAppendFlushCondOutCache(&state_); }

private:
    AMUcbufPackState state_;
};
#endif /* __cplusplus */

#endif /* AMU_CBUF_PACK_H */
