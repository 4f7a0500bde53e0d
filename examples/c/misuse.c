/*
 * Misuse from C gives an error code and a message, never a crash: every
 * check below must hold, and the program says which one did not.
 *
 *   cc -std=c99 misuse.c -I../../include -L../../target/release -lctm -o misuse
 */
#include <stdio.h>
#include <string.h>

#include "amDeviceManaged.h"
#include "amuAsm.h"
#include "amuCbufPack.h"
#include "ctm.h"

static int failures = 0;

/* `ok` must hold and, when `message` is set, the last error must mention it. */
static void check(int ok, const char *what, const char *message)
{
    const char *e = ctmGetLastError();
    if (!ok || (message && !strstr(e, message))) {
        printf("FAILED: %s (last error: \"%s\")\n", what, e);
        failures++;
    } else {
        printf("ok: %s: %s\n", what, message ? e : "");
    }
    ctmClearLastError();
}

int main(void)
{
    AMmanagedDeviceInfo info = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    check(amOpenManagedConnection(NULL, &info) == NULL, "open with a NULL name", "NULL");
    check(amOpenManagedConnection("/dev/sda", &info) == NULL, "open an unknown board", "no board");
    check(amOpenManagedConnection("/dev/pcie0", NULL) == NULL, "open with NULL info", "NULL");
    check(amSubmitCommandBuffer(NULL, 0, 4) == 0, "submit to a NULL device", "NULL");
    check(amCommandBufferConsumed(NULL, 1) != 0, "consumed on a NULL device reads as consumed", NULL);
    check(amCloseManagedConnection(NULL) == 0, "close a NULL device", "NULL");

    AMmanagedDevice dev = amOpenManagedConnection("/dev/pcie0", &info);
    check(dev != NULL, "open /dev/pcie0", NULL);
    unsigned char *cpu = (unsigned char *)info.baseAddressCPUc;
    AMuint32 base = info.baseAddressSYSc;

    check(amSubmitCommandBuffer(dev, base, 6) == 0, "a size that is no whole number of dwords", "multiple of 4");
    check(amSubmitCommandBuffer(dev, base + info.arenaSizeSYSc - 8, 64) == 0, "a buffer past the arena",
          "not inside one mapped arena");
    check(amSubmitCommandBuffer(dev, 0x08000000, 16) == 0, "a buffer outside every arena",
          "not inside one mapped arena");
    check(amCommandBufferConsumed(dev, 0) != 0, "id 0 reads as consumed", NULL);
    check(amCommandBufferConsumed(dev, 12345) != 0, "an unknown id reads as consumed", NULL);
    check(ctmGetBufferStatus(dev, 12345) == CTM_BUFFER_UNKNOWN, "an unknown id's status", NULL);
    check(ctmWaitBuffer(dev, 12345) == 0, "waiting for an unknown id", "no command buffer");

    /* A buffer that faults: start_program with no program set. */
    AMUcbufPackState pack;
    amuCbufPackInit(&pack, (unsigned int *)cpu, 4096);
    amuCbufPackAppendSetDomain(&pack, 0, 0, 3, 3);
    amuCbufPackAppendStartProgram(&pack);
    AMuint32 id = amSubmitCommandBuffer(dev, base, amuCbufPackGetCommandBufferSize(&pack));
    check(id != 0, "submit a buffer that will fault", NULL);
    check(ctmWaitBuffer(dev, id) == 0, "the buffer faults", "set_inst_fmt");
    check(amCommandBufferConsumed(dev, id) != 0, "a faulted buffer is consumed", NULL);
    check(ctmGetBufferStatus(dev, id) == CTM_BUFFER_FAULTED, "its status", NULL);
    check(ctmGetBufferFault(dev, id) && strstr(ctmGetBufferFault(dev, id), "byte 0x14"),
          "its fault names the packet's offset", NULL);

    /* A format the DPP does not have faults the buffer at that packet. */
    amuCbufPackReset(&pack);
    check(amuCbufPackAppendSetOutFmt(&pack, 0, base + 0x10000, AMU_CBUF_FLD_FORMAT_UINT8_1,
                                     AMU_CBUF_FLD_TILING_LINEAR, 16, 16) != 0,
          "packing a uint8_1 output", NULL);
    id = amSubmitCommandBuffer(dev, base, amuCbufPackGetCommandBufferSize(&pack));
    check(ctmWaitBuffer(dev, id) == 0, "a uint8_1 surface faults its buffer", "not DPP formats");

    /* Packing: bad arguments and overflow fail without writing past the buffer. */
    unsigned int small[4] = {0, 0, 0, 0xDEADBEEF};
    AMUcbufPackState tiny;
    amuCbufPackInit(&tiny, small, 12);
    check(amuCbufPackAppendSetInpFmt(&tiny, 16, base, 2, 0, 16, 16) == 0, "input 16", "input 16");
    amuCbufPackReset(&tiny);
    check(amuCbufPackAppendSetInstFmt(&tiny, base + 4, 0, 0, 0) == 0, "a misaligned address", "aligned");
    amuCbufPackReset(&tiny);
    check(amuCbufPackAppendSetOutFmt(&tiny, 0, base, 4, 0, 10, 16) == 0, "a pitch of 10", "multiple of 4");
    amuCbufPackReset(&tiny);
    check(amuCbufPackAppendStartProgram(&tiny) != 0, "one packet fits", NULL);
    check(amuCbufPackAppendStartProgram(&tiny) == 0, "the second does not", "do not fit");
    check(amuCbufPackAppendStartProgram(&tiny) == 0, "a failed pack stays failed", "earlier append");
    check(small[3] == 0xDEADBEEF && amuCbufPackGetCommandBufferSize(&tiny) == 8,
          "nothing was written past the capacity", NULL);
    check(amuCbufPackAppendStartProgram(NULL) == 0, "a NULL pack", "NULL");

    /* Assembly and images. */
    void *binary = NULL;
    AMuint32 size = 0;
    check(amuAsmAssemble("alu r0 = frobnicate(s0)", 0, &size, &binary, NULL) == 0, "bad assembly",
          "unknown RGB operation");
    check(amuAsmAssemble(NULL, 0, &size, &binary, NULL) == 0, "NULL source", "NULL");
    static const unsigned char garbage[64] = {1, 2, 3, 4};
    check(amuAsmDisassemble(garbage, NULL) == 0, "disassembling garbage", "ELF magic");
    check(amuAsmDisassemble(NULL, NULL) == 0, "disassembling NULL", "NULL");
    unsigned char fake[64];
    memset(fake, 0, sizeof fake);
    memcpy(fake, "\177ELF", 4);
    check(amuAsmDisassemble(fake, NULL) == 0, "an image with a broken header", "EI_CLASS");
    /* The same garbage at the instruction base faults the buffer. */
    memcpy(cpu + 0x800, fake, sizeof fake);
    amuCbufPackReset(&pack);
    amuCbufPackAppendSetInstFmt(&pack, base + 0x800, 0, 0, 0);
    amuCbufPackAppendSetDomain(&pack, 0, 0, 3, 3);
    amuCbufPackAppendStartProgram(&pack);
    id = amSubmitCommandBuffer(dev, base, amuCbufPackGetCommandBufferSize(&pack));
    check(ctmWaitBuffer(dev, id) == 0, "a garbage image at the instruction base", "executable image");

    check(ctmSetEngine(dev, "warp") == 0, "an unknown engine", "expected auto, jit or interp");
    check(ctmSetThreads(dev, 2) != 0, "two threads", NULL);

    check(amCloseManagedConnection(dev) != 0, "close", NULL);
    check(amCloseManagedConnection(dev) == 0, "close twice", "not open");
    check(amSubmitCommandBuffer(dev, base, 8) == 0, "submit to a closed device", "not open");
    check(ctmGetBufferStatus(dev, 1) == -1, "status on a closed device", "not open");

    printf("%d misuse checks failed\n", failures);
    return failures != 0;
}
