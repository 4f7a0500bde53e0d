/*
 * amuAsm.h — DPP assembly (docs/asm.md) to executable images and back.
 * See docs/c-api.md §6.
 */
#ifndef AMU_ASM_H
#define AMU_ASM_H

#include "amDeviceManaged.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Receives messages, one line at a time. */
typedef void (*AMUasmLogFunction)(const char *message);

/*
 * Assembles `length` bytes of `source` (0: up to its NUL) into an
 * executable image: *binary receives malloc'ed bytes (release them with
 * free) and *size their count. Copy them to a 2 KiB-aligned GPU address and
 * point set_inst_fmt there. Errors and validator warnings go to `log` (may
 * be NULL). Non-zero on success; on failure ctmGetLastError says why.
 */
AMuint32 amuAsmAssemble(const char *source, AMuint32 length, AMuint32 *size, void **binary,
                        AMUasmLogFunction log);

/* Sends the instructions of an executable image to `log`, one line each.
 * Non-zero on success. */
AMuint32 amuAsmDisassemble(const void *binary, AMUasmLogFunction log);

#ifdef __cplusplus
}
#endif

#endif /* AMU_ASM_H */
