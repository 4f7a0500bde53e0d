/*
 * ctm.h — what the C interface has beyond the CTM SDK's calls: the last
 * error, the version, engine and threads, and the fate of a buffer.
 * See docs/c-api.md §4.
 */
#ifndef CTM_H
#define CTM_H

#include "amDeviceManaged.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why the last failing call on this thread failed ("" if none did). The
 * text stays valid until the next failing call on this thread. */
const char *ctmGetLastError(void);
/* Forgets the last error of this thread. */
void ctmClearLastError(void);
/* "ctm VERSION". */
const char *ctmGetVersion(void);

/* The engine of later runs: "auto" (the fastest the host runs), "jit" or
 * "interp". 1 on success, 0 with the reason. */
AMuint32 ctmSetEngine(AMmanagedDevice device, const char *engine);
/* "jit" or "interp"; NULL for a NULL device. */
const char *ctmGetEngine(AMmanagedDevice device);
/* Worker threads of later runs; 0: all cores. 1 on success, 0 on failure. */
AMuint32 ctmSetThreads(AMmanagedDevice device, AMuint32 threads);
/* Instructions each group of quads may execute in one run before the run
 * stops as a runaway; 0: the default (2^24). 1 on success, 0 on failure. */
AMuint32 ctmSetBudget(AMmanagedDevice device, AMuint32 budget);

/* The state of a submitted buffer (ctmGetBufferStatus). */
#define CTM_BUFFER_DONE 0      /* completed without a fault */
#define CTM_BUFFER_FAULTED 1   /* stopped at a fault: ctmGetBufferFault */
#define CTM_BUFFER_PENDING 2   /* queued or running */
#define CTM_BUFFER_UNKNOWN 3   /* no buffer has this id */
#define CTM_BUFFER_FORGOTTEN 4 /* consumed long ago; its outcome is no longer kept */

/* One of CTM_BUFFER_*; -1 for a NULL device. Never blocks. */
int ctmGetBufferStatus(AMmanagedDevice device, AMuint32 id);
/* The fault of a consumed buffer (the packet's byte offset and what went
 * wrong), or NULL when it completed, is pending or is unknown. Valid until
 * the device is closed or the outcomes of 4096 later buffers are read. */
const char *ctmGetBufferFault(AMmanagedDevice device, AMuint32 id);
/* Blocks until buffer `id` is consumed. 1 when it completed; 0 when it
 * faulted or is unknown (ctmGetLastError says why). */
AMuint32 ctmWaitBuffer(AMmanagedDevice device, AMuint32 id);
/* Blocks until every buffer submitted so far is consumed. 1, or 0 for a
 * NULL device. */
AMuint32 ctmFinish(AMmanagedDevice device);

#ifdef __cplusplus
}
#endif

#endif /* CTM_H */
