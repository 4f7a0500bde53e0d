/*
 * amuCbufTypes.h — field values of command-buffer packets.
 * See docs/c-api.md §5 and docs/machine.md §3.
 */
#ifndef AMU_CBUF_TYPES_H
#define AMU_CBUF_TYPES_H

/* Element formats. The first five are the DPP's (the codes of its format
 * word); the SDK's other four have no DPP format: a buffer using one faults
 * at that packet. */
typedef enum AMUcbufFldFormatEnum {
    AMU_CBUF_FLD_FORMAT_UINT16_1 = 0,
    AMU_CBUF_FLD_FORMAT_UINT8_4 = 1,
    AMU_CBUF_FLD_FORMAT_FLOAT32_1 = 2,
    AMU_CBUF_FLD_FORMAT_FLOAT32_2 = 3,
    AMU_CBUF_FLD_FORMAT_FLOAT32_4 = 4,
    AMU_CBUF_FLD_FORMAT_UINT8_1 = 5,
    AMU_CBUF_FLD_FORMAT_UINT8_2 = 6,
    AMU_CBUF_FLD_FORMAT_UINT16_2 = 7,
    AMU_CBUF_FLD_FORMAT_UINT16_4 = 8
} AMUcbufFldFormat;

/* Address layouts (ctm lays tiled surfaces out linearly). */
typedef enum AMUcbufFldTilingEnum {
    AMU_CBUF_FLD_TILING_LINEAR = 0,
    AMU_CBUF_FLD_TILING_TILED0 = 1
} AMUcbufFldTiling;

/* Conditional tests (set_cond_test). */
typedef enum AMUcbufFldCondTestEnum {
    AMU_CBUF_FLD_COND_TEST_NEVER = 0,
    AMU_CBUF_FLD_COND_TEST_LESS = 1,
    AMU_CBUF_FLD_COND_TEST_LEQUAL = 2,
    AMU_CBUF_FLD_COND_TEST_EQUAL = 3,
    AMU_CBUF_FLD_COND_TEST_GEQUAL = 4,
    AMU_CBUF_FLD_COND_TEST_GREATER = 5,
    AMU_CBUF_FLD_COND_TEST_NOTEQUAL = 6,
    AMU_CBUF_FLD_COND_TEST_ALWAYS = 7
} AMUcbufFldCondTest;

/* Where the conditional test applies (set_cond_loc). */
typedef enum AMUcbufFldCondLocEnum {
    AMU_CBUF_FLD_COND_LOC_DPP = 0,
    AMU_CBUF_FLD_COND_LOC_PE = 1
} AMUcbufFldCondLoc;

#endif /* AMU_CBUF_TYPES_H */
