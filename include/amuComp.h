/*
 * amuComp.h — the CTM SDK's shader compiler as ctm provides it: ps_3_0
 * assembly (text, or Direct3D 9 bytecode) in the SDK compiler's dialect to
 * an executable image. See docs/c-api.md §9 and docs/d3d9.md §5.
 */
#ifndef AMU_COMP_H
#define AMU_COMP_H

#include "amDeviceManaged.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A compiler; opaque. */
typedef struct AMUcompCompilerRec *AMUcompCompiler;

/* A macro: name and definition. A list ends with {0, 0}. AMU_LANG_PS3
 * selects ps_3_0 assembly (the only language ctm compiles); AMU_DIALECT is
 * "ctm" (the default: texel coordinates, interpolated v0-v6) or "d3d9";
 * any other macro is replaced where it stands as a whole word. */
typedef struct AMUcompMacroRec {
    const char *name;
    const char *definition;
} AMUcompMacro;

/* Receives messages, one line at a time. */
typedef void (*AMUcompLogFunction)(const char *message);
/* An include handler; ps_3_0 assembly has no includes, so it is never
 * called (pass NULL). */
typedef void (*AMUcompIncludeHandler)(void);

AMUcompCompiler amuCompOpenCompiler(void);
/* 1, or 0 for NULL. */
AMuint32 amuCompCloseCompiler(AMUcompCompiler compiler);

/*
 * Compiles `length` bytes of `source` (0: up to its NUL). On success
 * (non-zero) *binary receives a malloc'ed executable image of *size bytes
 * (release it with free): copy it to a 2 KiB-aligned GPU address and point
 * set_inst_fmt there. `entry` names the entry point (any name: assembly has
 * one). Errors go to `log` (may be NULL) and ctmGetLastError.
 */
AMuint32 amuCompCompile(AMUcompCompiler compiler, const char *source, AMuint32 length,
                        const AMUcompMacro *macros, AMUcompIncludeHandler include,
                        const char *entry, AMuint32 *size, void **binary,
                        AMUcompLogFunction log);

#ifdef __cplusplus
}
#endif

#endif /* AMU_COMP_H */
