/*
 * kc_support.h — the pieces every part of the kc compiler shares.
 *
 *   arena     all memory of one compilation, freed at once (STYLE.md §6)
 *   vec       a growable array of pointers, allocated in an arena
 *   buf       a growable byte buffer on the heap (text output, SPIR-V words)
 *   src       the source files of a compilation and locations inside them
 *   diag      diagnostics: file:line:col, the source line, a caret, a fix
 *   sha256    content hashes for bundles and the tuning cache
 *
 * None of this exits the process; failures are return values or messages
 * left in a kc_diag.
 */
#ifndef KC_SUPPORT_H
#define KC_SUPPORT_H

#include <stdarg.h>
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "kc_platform.h"

#if defined(__MINGW32__) && !defined(__clang__)
/* mingw's gcc reads "printf" as msvcrt's (no %zu); kc uses mingw's C99 stdio */
#define KC_PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
#elif defined(__GNUC__)
#define KC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KC_PRINTF(f, a)
#endif

#define KC_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- arena ------------------------------------------------------------ */

typedef struct kc_arena_chunk kc_arena_chunk;
typedef struct kc_arena {
    kc_arena_chunk *head;
    size_t used_total; /* bytes handed out, for statistics and tests */
} kc_arena;

void kc_arena_init(kc_arena *a);
void kc_arena_free(kc_arena *a);
void *kc_arena_alloc(kc_arena *a, size_t size);     /* zeroed, 16-byte aligned */
char *kc_arena_strdup(kc_arena *a, const char *s);
char *kc_arena_strndup(kc_arena *a, const char *s, size_t n);
char *kc_arena_printf(kc_arena *a, const char *fmt, ...) KC_PRINTF(2, 3);
#define KC_NEW(arena, T) ((T *)kc_arena_alloc((arena), sizeof(T)))

/* ---- vec: pointers in an arena ------------------------------------------ */

typedef struct kc_vec {
    void **items;
    int len, cap;
} kc_vec;

void kc_vec_push(kc_arena *a, kc_vec *v, void *item);
#define KC_VEC_AT(v, T, i) ((T *)(v).items[(i)])

/* ---- map: string keys to pointers, in an arena ------------------------- */

typedef struct kc_map {
    const char **keys;
    void **vals;
    int len, cap;
} kc_map;

void kc_map_put(kc_arena *a, kc_map *m, const char *key, void *val); /* replaces */
void *kc_map_get(const kc_map *m, const char *key);                    /* NULL if absent */
void *kc_map_getn(const kc_map *m, const char *key, size_t keylen);

/* ---- buf: bytes on the heap --------------------------------------------- */

typedef struct kc_buf {
    char *data;
    size_t len, cap;
} kc_buf;

void kc_buf_reserve(kc_buf *b, size_t extra);
void kc_buf_append(kc_buf *b, const void *data, size_t n);
void kc_buf_puts(kc_buf *b, const char *s);
void kc_buf_putc(kc_buf *b, char c);
void kc_buf_printf(kc_buf *b, const char *fmt, ...) KC_PRINTF(2, 3);
void kc_buf_vprintf(kc_buf *b, const char *fmt, va_list ap);
void kc_buf_free(kc_buf *b);
/* Returns the text (NUL-terminated, owned by the caller) and empties b. */
char *kc_buf_take(kc_buf *b);

/* ---- src: source files and locations ------------------------------------ */

typedef struct kc_loc {
    int file; /* index into kc_src.files; -1 when there is no location */
    int line, col;
} kc_loc;

#define KC_NO_LOC ((kc_loc){-1, 0, 0})

typedef struct kc_src_file {
    const char *path;    /* as the user or the #include named it */
    const char *text;    /* contents, NUL-terminated (NULs inside are kept) */
    size_t len;          /* bytes of text, not counting the final NUL */
    bool builtin;        /* an embedded header such as <kc.h> */
} kc_src_file;

typedef struct kc_src {
    kc_arena *arena;
    kc_src_file **files;
    int nfiles, cap;
} kc_src;

void kc_src_init(kc_src *s, kc_arena *a);
void kc_src_free(kc_src *s);
/* Reads a regular file of at most max bytes into the source table;
 * returns its index or -1 (errno set, as by kc_read_file_max). */
int kc_src_load(kc_src *s, const char *path, size_t max);
/* Adds text that does not come from disk (tests, the fuzzer, <kc.h>). */
int kc_src_add(kc_src *s, const char *path, const char *text, size_t len, bool builtin);

/* ---- diag: diagnostics ------------------------------------------------- */

typedef enum { KC_DIAG_ERROR, KC_DIAG_WARNING, KC_DIAG_NOTE } kc_diag_level;

typedef struct kc_diag_entry {
    kc_loc loc;
    int seq;
    kc_buf text; /* the message with its source line, notes and fixes */
} kc_diag_entry;

typedef struct kc_diag {
    const kc_src *src;
    FILE *out;          /* where messages go as they are reported; may be NULL */
    kc_buf text;        /* every message, also kept for tests and the API */
    int nerrors, nwarnings;
    int max_errors;     /* stop reporting after this many (0 = 100) */
    /* While deferring, messages wait here and kc_diag_flush prints them in
     * source order: a file's errors read top to bottom, whichever pass
     * found them. */
    bool deferring;
    kc_diag_entry *pending;
    int npending, cap;
} kc_diag;

void kc_diag_init(kc_diag *d, const kc_src *src, FILE *out);
void kc_diag_free(kc_diag *d);
/* Reports "file:line:col: error: msg", the source line and a caret. */
void kc_error_at(kc_diag *d, kc_loc loc, const char *fmt, ...) KC_PRINTF(3, 4);
void kc_warn_at(kc_diag *d, kc_loc loc, const char *fmt, ...) KC_PRINTF(3, 4);
void kc_note_at(kc_diag *d, kc_loc loc, const char *fmt, ...) KC_PRINTF(3, 4);
/* Adds "  fix: …" under the last message. */
void kc_diag_fix(kc_diag *d, const char *fmt, ...) KC_PRINTF(2, 3);
void kc_diag_report(kc_diag *d, kc_diag_level level, kc_loc loc, const char *fmt, va_list ap);
bool kc_diag_too_many(const kc_diag *d);
void kc_diag_defer(kc_diag *d);
void kc_diag_flush(kc_diag *d);

/* ---- sha256 ----------------------------------------------------------- */

typedef struct kc_sha256 {
    uint32_t h[8];
    uint64_t nbytes;
    unsigned char block[64];
    size_t blen;
} kc_sha256;

void kc_sha256_init(kc_sha256 *c);
void kc_sha256_update(kc_sha256 *c, const void *data, size_t n);
void kc_sha256_final(kc_sha256 *c, unsigned char out[32]);
/* Hex digest of data, written to hex[65]. */
void kc_sha256_hex(const void *data, size_t n, char hex[65]);

/* ---- invariants -------------------------------------------------------- */

/* An invariant an earlier stage guarantees, found broken: a debug build
 * (and so every fuzzer) stops here; a release build goes on to the
 * "internal error" with a location that follows, so a user sees a message
 * rather than a crash. */
#define KC_BROKEN_INVARIANT(what) assert(!(what))

/* ---- small helpers ------------------------------------------------------ */

/* Reads a whole regular file of at most max bytes (NUL-terminated); NULL
 * with errno set on failure: EISDIR for a folder, ENODEV for anything else
 * that is not a regular file (a FIFO, a device), EFBIG over max. Never
 * blocks on a FIFO, never allocates more than max. */
char *kc_read_file_max(const char *path, size_t max, size_t *len);
/* kc_read_file_max with KC_MAX_FILE_BYTES, for files kc made itself. */
#define KC_MAX_FILE_BYTES ((size_t)1 << 30)
char *kc_read_file(const char *path, size_t *len);
/* Why kc_read_file_max failed, in words, from its errno. */
const char *kc_read_error(int err);
/* Writes data to path atomically: a temporary file, fsync, rename. The
 * file gets the mode open(2) would give a new file (kc_file_set_new_mode),
 * not mkstemp's 0600, so it is as shareable as any other file the user
 * writes. */
int kc_write_file_atomic(const char *path, const void *data, size_t len);

/* ---- parse: numbers -------------------------------------------------- */

/* An integer in [lo, hi], the whole of s (decimal, 0x hex or 0 octal);
 * false, *out untouched, for anything else. */
bool kc_parse_integer(const char *s, long long lo, long long hi, long long *out);

#endif
