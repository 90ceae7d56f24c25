/*
 * posix.c — kc_platform.h on Linux and other POSIX systems with dlopen.
 */
#include "kc_platform.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- shared libraries ------------------------------------------------------------------------------ */

void *kc_lib_open(const char *name, char *why, size_t whylen)
{
    /* RTLD_NODELETE: kc_lib_close (and a loader's dlclose) leave it loaded */
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib && whylen) {
        const char *e = dlerror();
        snprintf(why, whylen, "%s", e ? e : "not found");
    }
    return lib;
}

void *kc_lib_symbol(void *lib, const char *name)
{
    return dlsym(lib, name);
}

void kc_lib_close(void *lib)
{
    if (lib)
        dlclose(lib);
}

struct kc_lib_list {
    char **names;
    int n, cap;
};

static int add_name(struct dl_phdr_info *info, size_t size, void *user)
{
    (void)size;
    kc_lib_list *l = user;
    if (!info->dlpi_name || !*info->dlpi_name)
        return 0;
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        char **bigger = realloc(l->names, sizeof(char *) * (size_t)cap);
        if (!bigger)
            return 1;
        l->names = bigger, l->cap = cap;
    }
    if ((l->names[l->n] = strdup(info->dlpi_name)))
        l->n++;
    return 0;
}

kc_lib_list *kc_libs_loaded(void)
{
    kc_lib_list *l = calloc(1, sizeof(*l));
    if (l)
        dl_iterate_phdr(add_name, l);
    return l;
}

void kc_libs_pin_new(const kc_lib_list *before)
{
    kc_lib_list *now = kc_libs_loaded();
    for (int i = 0; now && i < now->n; i++) {
        bool old = false;
        for (int j = 0; before && j < before->n && !old; j++)
            old = strcmp(now->names[i], before->names[j]) == 0;
        void *h = old ? NULL : dlopen(now->names[i], RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
        if (h)
            dlclose(h); /* RTLD_NODELETE stays with the library */
    }
    kc_libs_free(now);
}

void kc_libs_free(kc_lib_list *l)
{
    if (!l)
        return;
    for (int i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
    free(l);
}

/* ---- files and directories ------------------------------------------------------------------------- */

FILE *kc_fopen(const char *path, const char *mode)
{
    return fopen(path, mode);
}

int kc_open_read(const char *path)
{
    return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

int kc_file_sync(int fd)
{
    return fsync(fd);
}

int kc_file_sync_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int err = errno;
    close(fd);
    errno = err;
    return rc;
}

int kc_file_set_new_mode(int fd)
{
    mode_t mask = umask(022); /* the only way to read it; set back at once */
    umask(mask);
    return fchmod(fd, 0666 & ~mask);
}

int kc_file_replace(const char *from, const char *to)
{
    return rename(from, to);
}

int kc_file_link(const char *from, const char *to)
{
    return link(from, to);
}

int kc_make_dir(const char *path, int mode)
{
    return mkdir(path, (mode_t)mode);
}

int kc_make_dirs(const char *path, int mode)
{
    char buf[KC_PATH_MAX];
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, (mode_t)mode) == 0 || errno == EEXIST ? 0 : -1;
}

char *kc_make_temp_dir(const char *prefix)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    size_t n = strlen(tmp) + strlen(prefix) + sizeof("/-XXXXXX");
    char *dir = malloc(n);
    if (!dir)
        return NULL;
    snprintf(dir, n, "%s/%s-XXXXXX", tmp, prefix);
    if (!mkdtemp(dir)) {
        int err = errno;
        free(dir);
        errno = err;
        return NULL;
    }
    return dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

int kc_remove_tree(const char *path)
{
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

char *kc_user_cache_dir(void)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    const char *base = xdg && *xdg ? xdg : home && *home ? home : NULL;
    if (!base)
        return NULL;
    size_t n = strlen(base) + sizeof("/.cache");
    char *dir = malloc(n);
    if (dir)
        snprintf(dir, n, "%s%s", base, base == xdg ? "" : "/.cache");
    return dir;
}

char *kc_real_path(const char *path, char *out, size_t outlen)
{
    char buf[PATH_MAX];
    if (!realpath(path, buf))
        return NULL;
    if (strlen(buf) >= outlen) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    return strcpy(out, buf);
}

bool kc_is_separator(char c)
{
    return c == '/';
}

void kc_path_normalize(char *path)
{
    (void)path;
}

const char *kc_last_separator(const char *path)
{
    return strrchr(path, '/');
}

bool kc_path_is_absolute(const char *path)
{
    return path[0] == '/';
}

/* ---- the process ---------------------------------------------------------------------------------- */

bool kc_is_terminal(FILE *f)
{
    return isatty(fileno(f)) != 0;
}

long kc_process_id(void)
{
    return (long)getpid();
}

double kc_process_cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

int kc_set_env(const char *name, const char *value)
{
    return setenv(name, value, 1);
}

void kc_restart_self(char **argv)
{
    execv("/proc/self/exe", argv);
}

static void (*interrupt_handler)(void);

static void on_sigint(int sig)
{
    (void)sig;
    signal(SIGINT, SIG_DFL); /* a second Ctrl-C ends it at once */
    interrupt_handler();
}

void kc_on_interrupt(void (*on_interrupt)(void))
{
    interrupt_handler = on_interrupt;
    signal(SIGINT, on_interrupt ? on_sigint : SIG_DFL);
}

void kc_write_stderr(const char *msg)
{
    ssize_t ignored = write(2, msg, strlen(msg));
    (void)ignored;
}
