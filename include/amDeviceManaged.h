/*
 * amDeviceManaged.h — the CTM host interface (HAL) as ctm provides it.
 * See docs/c-api.md §2–§3. Link with -lctm.
 */
#ifndef AM_DEVICE_MANAGED_H
#define AM_DEVICE_MANAGED_H

#ifdef __cplusplus
extern "C" {
#endif

/* A 32-bit unsigned value: GPU addresses, sizes, buffer ids. */
typedef unsigned int AMuint32;

/* One managed connection to a board; opaque. */
typedef struct AMmanagedDeviceRec *AMmanagedDevice;

/*
 * What amOpenManagedConnection reports: GPU base address and size in bytes
 * of each arena, and where the host sees them. The first nine members are
 * the SDK's; the order and the last three are ctm's (docs/c-api.md §3).
 * Initialise it with twelve zeros.
 */
typedef struct AMmanagedDeviceInfoRec {
    AMuint32 baseAddressGPU;   /* local memory */
    AMuint32 arenaSizeGPU;
    AMuint32 baseAddressGPUb;  /* second local arena (ctm) */
    AMuint32 arenaSizeGPUb;
    AMuint32 baseAddressSYS;   /* uncached system memory */
    AMuint32 arenaSizeSYS;
    AMuint32 baseAddressSYSc;  /* cached system memory */
    AMuint32 arenaSizeSYSc;
    void *baseAddressCPU;      /* the host's view of the SYS arena */
    void *baseAddressCPUc;     /* the host's view of the SYSc arena */
    void *baseAddressCPUGPU;   /* the host's view of the GPU arena (ctm) */
    void *baseAddressCPUGPUb;  /* the host's view of the GPU b arena (ctm) */
} AMmanagedDeviceInfo;

/*
 * Opens board `device` ("/dev/pcie0", "/dev/pcie1", ...; every open is a
 * board of its own) and fills *info. NULL on failure: ctmGetLastError()
 * (ctm.h) says why. Settings come from the environment (CTM_ENGINE,
 * CTM_THREADS, ...; docs/c-api.md §4).
 */
AMmanagedDevice amOpenManagedConnection(const char *device, AMmanagedDeviceInfo *info);

/* Waits for outstanding buffers, then frees the device and its arenas.
 * 1 on success, 0 for a NULL device. */
AMuint32 amCloseManagedConnection(AMmanagedDevice device);

/*
 * Queues sizeInBytes bytes of commands at GPU address gpuAddress and
 * returns at once: the buffer's id (1, 2, ...), or 0 when it could not be
 * queued (not inside one arena, not a whole number of dwords, NULL
 * device). Buffers of one device run in order.
 */
AMuint32 amSubmitCommandBuffer(AMmanagedDevice device, AMuint32 gpuAddress, AMuint32 sizeInBytes);

/*
 * Non-zero once every command of buffer `id` has completed (a faulting
 * buffer counts as consumed; ctm.h reads its fault). An id the device
 * never handed out, 0 included, reads as consumed, and so does any id of a
 * NULL or closed device (ctmGetLastError says why): a polling loop always
 * ends.
 */
AMuint32 amCommandBufferConsumed(AMmanagedDevice device, AMuint32 id);

#ifdef __cplusplus
}
#endif

#endif /* AM_DEVICE_MANAGED_H */
