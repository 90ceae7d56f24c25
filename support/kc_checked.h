/*
 * kc_checked.h — checked mode (`kc build --checked`): what a checked
 * kernel takes and writes, shared by the compiler (compiler/bounds.c) and
 * libkcrt (runtime/checked.c), which fills and reads it.
 *
 * A checked kernel has hidden parameters after its own: one uint per
 * buffer parameter, in order (the buffer's length in elements, from the
 * size its buffer was created with), a uint naming the kernel for the
 * report (libkcrt's number for it), then a uint buffer, the record. The
 * first access out of bounds (in time, over every launch since the
 * record was last read) fills it; the others only lose the race.
 *
 * A bundle built so has meta `checked` = "bounds", and per kernel
 * `checked.files.KERNEL`: the paths of its source files, '\n'-joined, in
 * the order of the record's file index.
 */
#ifndef KC_CHECKED_H
#define KC_CHECKED_H

enum {
    KC_CHECK_HIT,       /* 0 until the first violation, then 1 */
    KC_CHECK_KERNEL,    /* the kernel's hidden __kc_kernel argument */
    KC_CHECK_FILE,      /* index into checked.files.KERNEL */
    KC_CHECK_LINE,
    KC_CHECK_COL,
    KC_CHECK_INDEX_LO,  /* the index, low 32 bits */
    KC_CHECK_INDEX_HI,  /* high 32 bits, sign-extended for int indices */
    KC_CHECK_WHAT,      /* a buffer's parameter index, or KC_CHECK_LOCAL | kind */
    KC_CHECK_LEN,       /* the length the index was tested against */
    KC_CHECK_WORDS      /* the record's size in uints */
};

/* KC_CHECK_WHAT for an array that is not a buffer parameter. */
#define KC_CHECK_LOCAL 0x80000000u
enum { KC_CHECK_PRIVATE = 0, KC_CHECK_SHARED = 1, KC_CHECK_CONST = 2 };

#define KC_CHECK_LEN_PREFIX "__kc_len_"
#define KC_CHECK_KERNEL_PARAM "__kc_kernel"
#define KC_CHECK_RECORD "__kc_check"
/* Hidden parameters of a checked kernel with nbuffers buffers. */
#define KC_CHECK_HIDDEN(nbuffers) ((nbuffers) + 2)

#endif
