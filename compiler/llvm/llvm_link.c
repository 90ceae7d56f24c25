/*
 * llvm_link.c — ld.lld, run as a program, turns the object LLVM emits into
 * a code object: `ld.lld -shared -o k.hsaco k.o`, which is what clang's
 * HIP toolchain does (and, for the host target, into a shared object). lld has no C API, so kc writes the
 * object to a private temporary directory, runs the linker with posix_spawn (no shell) and reads the result
 * back; the linker's messages become kc's.
 */
#include "llvm_private.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char lld_path[4096];
static pthread_once_t lld_once = PTHREAD_ONCE_INIT;

static bool executable(const char *p)
{
    struct stat st;
    return p && *p && stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

static bool on_path(const char *name, char *out, size_t n)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t len = strcspn(path, ":");
        snprintf(out, n, "%.*s/%s", (int)len, path, name);
        if (len && executable(out))
            return true;
        path += len + (path[len] == ':');
    }
    out[0] = 0;
    return false;
}

static void find_lld(void)
{
    const char *env = getenv("KC_LD_LLD");
    if (executable(env))
        snprintf(lld_path, sizeof(lld_path), "%s", env);
    else if (!on_path("ld.lld-19", lld_path, sizeof(lld_path))) {
        if (executable("/usr/lib/llvm-19/bin/ld.lld"))
            snprintf(lld_path, sizeof(lld_path), "/usr/lib/llvm-19/bin/ld.lld");
        else
            on_path("ld.lld", lld_path, sizeof(lld_path));
    }
}

const char *kc_llvm_lld_path(void)
{
    pthread_once(&lld_once, find_lld);
    return lld_path[0] ? lld_path : NULL;
}

/* Runs argv, collecting what it writes to stderr; its exit status, or -1. */
static int run(char *const argv[], kc_buf *errors)
{
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipe_fds[1], 2);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipe_fds[1]);
    if (rc != 0) {
        close(pipe_fds[0]);
        kc_buf_printf(errors, "cannot run %s: %s", argv[0], strerror(rc));
        return -1;
    }
    char chunk[512];
    ssize_t got;
    while ((got = read(pipe_fds[0], chunk, sizeof(chunk))) > 0 || (got < 0 && errno == EINTR))
        if (got > 0)
            kc_buf_append(errors, chunk, (size_t)got);
    close(pipe_fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool write_all(const char *path, const void *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    const char *p = data;
    while (size) {
        ssize_t n = write(fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close(fd);
            return false;
        }
        p += n;
        size -= (size_t)n;
    }
    return close(fd) == 0;
}

static bool link_in(lw *W, const char *lld, const char *dir, const void *obj, size_t size,
                    kc_llvm_module *out)
{
    char in[4200], co[4200];
    snprintf(in, sizeof(in), "%s/kernel.o", dir);
    snprintf(co, sizeof(co), "%s/kernel.so", dir);
    bool ok = false;
    if (!write_all(in, obj, size)) {
        lw_fail(W, "cannot write '%s': %s", in, strerror(errno));
    } else {
        kc_buf errors = {0};
        char *argv[] = {(char *)lld, "-shared", "-o", co, in, NULL};
        int rc = run(argv, &errors);
        size_t len = 0;
        if (rc == 0 && (out->data = kc_read_file(co, &len)) != NULL) {
            out->size = len;
            ok = true;
        } else {
            lw_fail(W, "linking the code object of '%s' failed (%s, exit status %d): %s", W->fn->name, lld,
                    rc, errors.data ? errors.data : "no message");
        }
        kc_buf_free(&errors);
    }
    unlink(in);
    unlink(co);
    return ok;
}

bool lw_link(lw *W, const void *obj, size_t size, kc_llvm_module *out)
{
    const char *lld = kc_llvm_lld_path();
    if (!lld) {
        lw_fail(W, "kc needs ld.lld (LLVM's linker) to make AMDGPU code objects and found none");
        kc_diag_fix(W->diag,
                    "install lld-19 (Debian: apt install lld-19), or set KC_LD_LLD to the ld.lld to use");
        return false;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/kc-lld-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        lw_fail(W, "cannot make a temporary directory '%s': %s", dir, strerror(errno));
        return false;
    }
    bool ok = link_in(W, lld, dir, obj, size, out);
    rmdir(dir);
    return ok;
}
