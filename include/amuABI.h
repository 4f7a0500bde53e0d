/*
 * amuABI.h — the constants of an executable image: the user constants a
 * host sets by name and the literal constants the shader defines.
 * See docs/c-api.md §10.
 */
#ifndef AMU_ABI_H
#define AMU_ABI_H

#include "amDeviceManaged.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum AMUabiDataTypeEnum {
    AMU_ABI_FLOAT32 = 0,
    AMU_ABI_INT32 = 1,
    AMU_ABI_BOOL32 = 2
} AMUabiDataType;

/* A name of the shader's constant table. */
typedef struct AMUabiNameRec {
    char str[64];
} AMUabiName;

/* A constant the host sets: its name, type and register (float constant
 * `addr` at float-constant base + 16 * addr; integer and boolean constants
 * at their base + 4 * addr). */
typedef struct AMUabiUserConstRec {
    AMUabiName name;
    AMUabiDataType type;
    AMuint32 addr;
} AMUabiUserConst;

/* A literal (def, defi, defb) and where it goes. int32 holds count,
 * initial aL, step (as a byte), 0; bool32[0] is 0 or 1. */
typedef struct AMUabiLitConstRec {
    AMUabiDataType type;
    AMuint32 addr;
    union {
        float float32[4];
        AMuint32 int32[4];
        AMuint32 bool32[4];
    } value;
} AMUabiLitConst;

typedef struct AMUabiConstsInfoRec {
    AMuint32 userConstsCount;
    AMUabiUserConst *userConsts;
    AMuint32 litConstsCount;
    AMUabiLitConst *litConsts;
} AMUabiConstsInfo;

/* The constants of the executable image at `binary`; counts 0 when it is
 * no image (ctmGetLastError says why). The arrays are the library's until
 * amuABIFreeConstants. */
AMUabiConstsInfo amuABIExtractConstants(const void *binary);

/* Writes the literal constants through CPU pointers to the constant
 * files: float N at fconst + 16N, integer N at iconst + 4N, boolean N at
 * bconst + 4N. A NULL pointer skips its kind. */
void amuABISetLiteralConstants(AMUabiConstsInfo info, void *fconst, void *iconst, void *bconst);

/* Releases the arrays of `info` (ctm). */
void amuABIFreeConstants(AMUabiConstsInfo info);

#ifdef __cplusplus
}
#endif

#endif /* AMU_ABI_H */
