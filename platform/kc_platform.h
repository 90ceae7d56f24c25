/*
 * kc_platform.h — what differs between POSIX systems and Windows, behind
 * one interface: loading driver libraries, replacing a file atomically,
 * directories, canonical paths, terminals, restarting the process.
 * posix.c implements it for Linux (and any POSIX system with dlopen),
 * win32.c for Windows (mingw-w64); the build compiles exactly one.
 *
 * Paths are char strings in both: on Windows kc.exe runs with UTF-8 as its
 * code page (its manifest says so), so a path is UTF-8 there as on Linux;
 * libkcrt opens bundles through SQLite, which takes UTF-8 on both. '/' and
 * '\' both separate on Windows (kc_is_separator).
 */
#ifndef KC_PLATFORM_H
#define KC_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The longest path kc makes or resolves (Linux's PATH_MAX; Windows paths
 * may be as long with the long-path setting). */
#define KC_PATH_MAX 4096

/* ---- shared libraries ------------------------------------------------------------------------------ */

/* The names of the driver libraries, as the system's loader finds them. */
#if defined(_WIN32)
#define KC_LIB_VULKAN "vulkan-1.dll"
#define KC_LIB_CUDA "nvcuda.dll"
#else
#define KC_LIB_VULKAN "libvulkan.so.1"
#define KC_LIB_CUDA "libcuda.so.1"
#endif

/* Loads a library (a name the loader searches for, or a path) for the life
 * of the process: drivers are not made to be unloaded and loaded again.
 * NULL on failure, with the loader's reason in why. */
void *kc_lib_open(const char *name, char *why, size_t whylen);
/* The address of a function the library exports; NULL when it has none.
 * (Returned as void *, as dlsym does; the caller copies it into a function
 * pointer with memcpy.) */
void *kc_lib_symbol(void *lib, const char *name);
/* Drops kc_lib_open's handle; the library stays loaded. */
void kc_lib_close(void *lib);

/* The libraries loaded in the process now, so that those a driver loads
 * later can be pinned (kc_libs_pin_new): Vulkan's loader unloads drivers
 * and layers with the instance, and Mesa's drivers are not made for that. */
typedef struct kc_lib_list kc_lib_list;
kc_lib_list *kc_libs_loaded(void); /* NULL when they cannot be listed */
/* Keeps every library loaded now that `before` does not list loaded for
 * the life of the process; the host application's own are left alone. */
void kc_libs_pin_new(const kc_lib_list *before);
void kc_libs_free(kc_lib_list *list);

/* ---- files and directories ------------------------------------------------------------------------- */

/* fopen with a UTF-8 path (_wfopen on Windows, where fopen takes the
 * process's code page). */
FILE *kc_fopen(const char *path, const char *mode);
/* Opens a file to read, without blocking on a FIFO and without handing the
 * descriptor to child processes; binary on Windows. -1 with errno. */
int kc_open_read(const char *path);
/* Makes what was written to fd durable. 0, or -1 with errno. */
int kc_file_sync(int fd);
/* Makes a closed file's contents durable (opened again to sync it:
 * Windows flushes only through a handle that may write). 0, or -1 with
 * errno. */
int kc_file_sync_path(const char *path);
/* Gives a new file the mode an ordinary new file gets (0666 less the
 * umask; on Windows files have no mode bits: nothing to do). */
int kc_file_set_new_mode(int fd);
/* Renames from to to, replacing to if it exists, atomically where the
 * file system can (rename(2); MoveFileEx with REPLACE_EXISTING on Windows,
 * where rename() refuses an existing target). 0, or -1 with errno. */
int kc_file_replace(const char *from, const char *to);
/* Links to to the same file as from, failing with EEXIST when to exists:
 * a new file appears complete or not at all and never replaces another.
 * 0, or -1 with errno. */
int kc_file_link(const char *from, const char *to);
/* Makes a directory with the given permissions (ignored on Windows). 0, or
 * -1 with errno (EEXIST when it exists). */
int kc_make_dir(const char *path, int mode);
/* The absolute, canonical path (symbolic links resolved where the system
 * has them) in out (size outlen); NULL with errno when the path does not
 * exist or does not fit. */
char *kc_real_path(const char *path, char *out, size_t outlen);
/* Makes the directory and every missing directory above it (mkdir -p).
 * 0, or -1 with errno. */
int kc_make_dirs(const char *path, int mode);
/* Makes a new, empty directory of this user's in the system's temporary
 * folder (TMPDIR or /tmp; GetTempPath on Windows), named prefix-XXXXXX;
 * returns its path (malloc'ed) or NULL with errno. */
char *kc_make_temp_dir(const char *prefix);
/* Removes a directory and everything in it, never following a link out of
 * it. 0, or -1 with errno. */
int kc_remove_tree(const char *path);
/* The folder for this user's caches: XDG_CACHE_HOME, else HOME/.cache on
 * POSIX; XDG_CACHE_HOME, else LOCALAPPDATA on Windows. NULL when none is
 * set; otherwise malloc'ed. */
char *kc_user_cache_dir(void);
/* The variables kc_user_cache_dir reads, for messages when none is set. */
#if defined(_WIN32)
#define KC_USER_CACHE_VARS "neither XDG_CACHE_HOME nor LOCALAPPDATA is set"
#else
#define KC_USER_CACHE_VARS "neither XDG_CACHE_HOME nor HOME is set"
#endif
/* True for the characters that separate a path's parts: '/' (and '\' on
 * Windows). */
bool kc_is_separator(char c);
/* Writes path's separators as '/' (Windows; nothing to do on POSIX), so
 * that a bundle records the same source paths wherever it is built. */
void kc_path_normalize(char *path);
/* The last separator in path, or NULL. */
const char *kc_last_separator(const char *path);
/* True when the path is absolute: "/x"; on Windows also "C:\x", "C:/x",
 * "\\server\x". */
bool kc_path_is_absolute(const char *path);

/* ---- the process ---------------------------------------------------------------------------------- */

/* True when f is an interactive terminal (a console on Windows). */
bool kc_is_terminal(FILE *f);
/* The process's id, for names of temporary files and seeds. */
long kc_process_id(void);
/* The CPU time this process has used so far, user and system, over all
 * its threads, in seconds; 0 when it cannot be read. */
double kc_process_cpu_seconds(void);
/* Sets an environment variable for this process and its children. */
int kc_set_env(const char *name, const char *value);
/* Runs the program again with argv (argv[0] included), as a new start of
 * the same command: POSIX replaces the process (execv of /proc/self/exe);
 * Windows starts the program again, waits for it and exits with its exit
 * code. Returns only on failure (errno set). Safe to call from any thread. */
void kc_restart_self(char **argv);
/* Calls on_interrupt on Ctrl-C (SIGINT; the console's Ctrl-C event on
 * Windows). From then on a second Ctrl-C ends the process at once, unless
 * kc_on_interrupt is called again. NULL: the default again. */
void kc_on_interrupt(void (*on_interrupt)(void));
/* Writes a message to standard error from a signal handler: no stdio. */
void kc_write_stderr(const char *msg);

#endif
