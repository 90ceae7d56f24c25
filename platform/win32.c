/*
 * win32.c — kc_platform.h on Windows (built with mingw-w64).
 *
 * Every path is taken as UTF-8 and handed to the wide (UTF-16) API, so
 * libkcrt in an application without a UTF-8 manifest still opens the path
 * its caller meant; paths given back use '/' (Windows accepts it), so the
 * rest of kc compares and splits them as on POSIX.
 */
#include "kc_platform.h"

#include <windows.h>

#include <direct.h>
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <psapi.h>
#include <stdlib.h>
#include <string.h>

/* ---- UTF-8 and UTF-16, errors ---------------------------------------------------------------------- */

/* A malloc'ed UTF-16 copy of a UTF-8 string; NULL with errno. */
static wchar_t *wide(const char *s)
{
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
    wchar_t *w = n > 0 ? malloc(sizeof(wchar_t) * (size_t)n) : NULL;
    if (!w || MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
        free(w);
        errno = n > 0 ? ENOMEM : EINVAL;
        return NULL;
    }
    return w;
}

/* A UTF-16 string as UTF-8 in out; false when it does not fit. */
static bool narrow(const wchar_t *w, char *out, size_t outlen)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)(outlen > INT_MAX ? INT_MAX : outlen), NULL, NULL);
    if (n <= 0) {
        errno = ENAMETOOLONG;
        return false;
    }
    return true;
}

/* errno for the thread's last Windows error. */
static int set_errno(void)
{
    switch (GetLastError()) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
    case ERROR_MOD_NOT_FOUND: errno = ENOENT; break;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION: errno = EACCES; break;
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS: errno = EEXIST; break;
    case ERROR_DIR_NOT_EMPTY: errno = ENOTEMPTY; break;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY: errno = ENOMEM; break;
    case ERROR_FILENAME_EXCED_RANGE: errno = ENAMETOOLONG; break;
    case ERROR_NOT_SAME_DEVICE: errno = EXDEV; break;
    case ERROR_DISK_FULL: errno = ENOSPC; break;
    default: errno = EIO; break;
    }
    return -1;
}

static void slashes(char *s)
{
    for (; *s; s++)
        if (*s == '\\')
            *s = '/';
}

/* ---- shared libraries ------------------------------------------------------------------------------ */

void *kc_lib_open(const char *name, char *why, size_t whylen)
{
    wchar_t *w = wide(name);
    HMODULE lib = w ? LoadLibraryW(w) : NULL;
    if (lib) {
        /* pinned: FreeLibrary, ours or a loader's, leaves it loaded */
        HMODULE pinned;
        GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_PIN, w, &pinned);
    } else if (whylen) {
        DWORD code = GetLastError();
        char msg[256] = "";
        FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0, msg, sizeof(msg),
                       NULL);
        size_t n = strlen(msg);
        while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r' || msg[n - 1] == ' ' || msg[n - 1] == '.'))
            msg[--n] = 0;
        snprintf(why, whylen, "%s (error %lu)", *msg ? msg : "LoadLibrary failed", (unsigned long)code);
    }
    free(w);
    return (void *)lib;
}

void *kc_lib_symbol(void *lib, const char *name)
{
    FARPROC f = GetProcAddress((HMODULE)lib, name);
    void *p;
    memcpy(&p, &f, sizeof(p));
    return p;
}

void kc_lib_close(void *lib)
{
    if (lib)
        FreeLibrary((HMODULE)lib);
}

struct kc_lib_list {
    HMODULE *mods;
    DWORD n;
};

kc_lib_list *kc_libs_loaded(void)
{
    kc_lib_list *l = calloc(1, sizeof(*l));
    DWORD need = 0, cap = 256;
    while (l) {
        HMODULE *mods = realloc(l->mods, sizeof(HMODULE) * cap);
        if (!mods)
            break;
        l->mods = mods;
        if (!EnumProcessModules(GetCurrentProcess(), mods, (DWORD)sizeof(HMODULE) * cap, &need))
            break;
        if (need <= sizeof(HMODULE) * cap) {
            l->n = need / (DWORD)sizeof(HMODULE);
            return l;
        }
        cap = need / (DWORD)sizeof(HMODULE) + 16;
    }
    kc_libs_free(l);
    return NULL;
}

void kc_libs_pin_new(const kc_lib_list *before)
{
    kc_lib_list *now = kc_libs_loaded();
    for (DWORD i = 0; now && i < now->n; i++) {
        bool old = false;
        for (DWORD j = 0; before && j < before->n && !old; j++)
            old = now->mods[i] == before->mods[j];
        HMODULE pinned;
        if (!old)
            GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_PIN | GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS,
                               (LPCWSTR)(void *)now->mods[i], &pinned);
    }
    kc_libs_free(now);
}

void kc_libs_free(kc_lib_list *l)
{
    if (l)
        free(l->mods);
    free(l);
}

/* ---- files and directories ------------------------------------------------------------------------- */

FILE *kc_fopen(const char *path, const char *mode)
{
    wchar_t *w = wide(path), *m = wide(mode);
    FILE *f = w && m ? _wfopen(w, m) : NULL;
    free(w), free(m);
    return f;
}

int kc_open_read(const char *path)
{
    wchar_t *w = wide(path);
    int fd = w ? _wopen(w, _O_RDONLY | _O_BINARY | _O_NOINHERIT) : -1;
    free(w);
    return fd;
}

int kc_file_sync(int fd)
{
    return _commit(fd);
}

int kc_file_sync_path(const char *path)
{
    wchar_t *w = wide(path);
    int fd = w ? _wopen(w, _O_RDWR | _O_BINARY | _O_NOINHERIT) : -1;
    free(w);
    if (fd < 0)
        return -1;
    int rc = _commit(fd);
    int err = errno;
    _close(fd);
    errno = err;
    return rc;
}

int kc_file_set_new_mode(int fd)
{
    (void)fd; /* no mode bits: the folder's permissions apply */
    return 0;
}

int kc_file_replace(const char *from, const char *to)
{
    wchar_t *wf = wide(from), *wt = wide(to);
    BOOL ok = wf && wt && MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
    int rc = ok ? 0 : wf && wt ? set_errno() : -1;
    free(wf), free(wt);
    return rc;
}

int kc_file_link(const char *from, const char *to)
{
    wchar_t *wf = wide(from), *wt = wide(to);
    BOOL ok = wf && wt && CreateHardLinkW(wt, wf, NULL);
    int rc = ok ? 0 : wf && wt ? set_errno() : -1;
    free(wf), free(wt);
    return rc;
}

int kc_make_dir(const char *path, int mode)
{
    (void)mode;
    wchar_t *w = wide(path);
    int rc = w ? _wmkdir(w) : -1;
    free(w);
    return rc;
}

/* Where the parts after a path's root begin: past "C:\", "\\server\share\"
 * or the leading separators. */
static const char *past_root(const char *p)
{
    if (kc_is_separator(p[0]) && kc_is_separator(p[1])) { /* \\server\share */
        p += 2;
        for (int parts = 0; *p && parts < 2; parts++) {
            while (*p && !kc_is_separator(*p))
                p++;
            while (kc_is_separator(*p))
                p++;
        }
        return p;
    }
    if (((p[0] | 32) >= 'a' && (p[0] | 32) <= 'z') && p[1] == ':')
        p += 2;
    while (kc_is_separator(*p))
        p++;
    return p;
}

int kc_make_dirs(const char *path, int mode)
{
    char buf[KC_PATH_MAX];
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + (past_root(buf) - buf); *p; p++)
        if (kc_is_separator(*p)) {
            char sep = *p;
            *p = 0;
            if (kc_make_dir(buf, mode) != 0 && errno != EEXIST)
                return -1;
            *p = sep;
        }
    return kc_make_dir(buf, mode) == 0 || errno == EEXIST ? 0 : -1;
}

char *kc_make_temp_dir(const char *prefix)
{
    wchar_t wtmp[MAX_PATH + 1];
    char tmp[KC_PATH_MAX];
    DWORD n = GetTempPathW(MAX_PATH + 1, wtmp);
    if (n == 0 || n > MAX_PATH || !narrow(wtmp, tmp, sizeof(tmp))) {
        errno = ENOENT;
        return NULL;
    }
    slashes(tmp);
    size_t len = strlen(tmp) + strlen(prefix) + sizeof("/-XXXXXX");
    char *dir = malloc(len);
    if (!dir)
        return NULL;
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    ULONGLONG seed = GetTickCount64() ^ ((ULONGLONG)GetCurrentProcessId() << 32) ^ (ULONGLONG)(uintptr_t)dir;
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[7];
        for (int i = 0; i < 6; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            suffix[i] = digits[(seed >> 33) % (sizeof(digits) - 1)];
        }
        suffix[6] = 0;
        snprintf(dir, len, "%s%s%s-%s", tmp, kc_is_separator(tmp[strlen(tmp) - 1]) ? "" : "/", prefix, suffix);
        if (kc_make_dir(dir, 0700) == 0)
            return dir;
        if (errno != EEXIST)
            break;
    }
    int err = errno;
    free(dir);
    errno = err;
    return NULL;
}

static int remove_tree_w(const wchar_t *dir)
{
    size_t n = wcslen(dir);
    wchar_t *pattern = malloc(sizeof(wchar_t) * (n + 3));
    if (!pattern)
        return -1;
    memcpy(pattern, dir, sizeof(wchar_t) * n);
    memcpy(pattern + n, L"\\*", sizeof(wchar_t) * 3);
    WIN32_FIND_DATAW e;
    HANDLE h = FindFirstFileW(pattern, &e);
    free(pattern);
    int rc = 0;
    if (h != INVALID_HANDLE_VALUE) {
        do {
            if (wcscmp(e.cFileName, L".") == 0 || wcscmp(e.cFileName, L"..") == 0)
                continue;
            size_t m = wcslen(e.cFileName);
            wchar_t *full = malloc(sizeof(wchar_t) * (n + m + 2));
            if (!full) {
                rc = -1;
                continue;
            }
            memcpy(full, dir, sizeof(wchar_t) * n);
            full[n] = L'\\';
            memcpy(full + n + 1, e.cFileName, sizeof(wchar_t) * (m + 1));
            bool is_dir = e.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY;
            /* a link to a folder is removed, never followed */
            if (is_dir && !(e.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT))
                rc |= remove_tree_w(full);
            else if (is_dir ? !RemoveDirectoryW(full) : !DeleteFileW(full))
                rc = set_errno();
            free(full);
        } while (FindNextFileW(h, &e));
        FindClose(h);
    }
    if (!RemoveDirectoryW(dir))
        rc = set_errno();
    return rc;
}

int kc_remove_tree(const char *path)
{
    wchar_t *w = wide(path);
    int rc = w ? remove_tree_w(w) : -1;
    free(w);
    return rc;
}

/* An environment variable as UTF-8 (malloc'ed), or NULL when unset. */
static char *env_utf8(const wchar_t *name)
{
    const wchar_t *v = _wgetenv(name);
    if (!v || !*v)
        return NULL;
    char buf[KC_PATH_MAX];
    return narrow(v, buf, sizeof(buf)) ? strdup(buf) : NULL;
}

char *kc_user_cache_dir(void)
{
    char *dir = env_utf8(L"XDG_CACHE_HOME");
    if (!dir)
        dir = env_utf8(L"LOCALAPPDATA");
    if (dir)
        slashes(dir);
    return dir;
}

char *kc_real_path(const char *path, char *out, size_t outlen)
{
    wchar_t *w = wide(path);
    if (!w)
        return NULL;
    /* the file itself (a folder too: BACKUP_SEMANTICS), links resolved */
    HANDLE h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                           FILE_FLAG_BACKUP_SEMANTICS, NULL);
    free(w);
    if (h == INVALID_HANDLE_VALUE) {
        set_errno();
        return NULL;
    }
    wchar_t full[KC_PATH_MAX];
    DWORD n = GetFinalPathNameByHandleW(h, full, KC_PATH_MAX, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    CloseHandle(h);
    if (n == 0 || n >= KC_PATH_MAX) {
        errno = n ? ENAMETOOLONG : EIO;
        return NULL;
    }
    const wchar_t *p = full;
    if (wcsncmp(p, L"\\\\?\\UNC\\", 8) == 0) { /* \\?\UNC\server\share: \\server\share */
        p += 6;
        full[6] = L'\\';
    } else if (wcsncmp(p, L"\\\\?\\", 4) == 0) {
        p += 4;
    }
    if (!narrow(p, out, outlen))
        return NULL;
    slashes(out);
    return out;
}

bool kc_is_separator(char c)
{
    return c == '/' || c == '\\';
}

void kc_path_normalize(char *path)
{
    slashes(path);
}

const char *kc_last_separator(const char *path)
{
    const char *a = strrchr(path, '/'), *b = strrchr(path, '\\');
    return a > b ? a : b;
}

bool kc_path_is_absolute(const char *path)
{
    return kc_is_separator(path[0]) ||
           (((path[0] | 32) >= 'a' && (path[0] | 32) <= 'z') && path[1] == ':' && kc_is_separator(path[2]));
}

/* ---- the process ---------------------------------------------------------------------------------- */

bool kc_is_terminal(FILE *f)
{
    /* _isatty says yes to NUL and to any character device; a console is
     * what takes \r and colours */
    intptr_t h = _get_osfhandle(_fileno(f));
    DWORD mode;
    return h != -1 && GetConsoleMode((HANDLE)h, &mode);
}

long kc_process_id(void)
{
    return (long)GetCurrentProcessId();
}

double kc_process_cpu_seconds(void)
{
    FILETIME created, exited, kernel, user;
    if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user))
        return 0;
    ULARGE_INTEGER k = {{kernel.dwLowDateTime, kernel.dwHighDateTime}},
                   u = {{user.dwLowDateTime, user.dwHighDateTime}};
    return (double)(k.QuadPart + u.QuadPart) * 1e-7; /* 100 ns units */
}

int kc_set_env(const char *name, const char *value)
{
    wchar_t *wn = wide(name), *wv = wide(value);
    int rc = wn && wv && _wputenv_s(wn, wv) == 0 ? 0 : -1;
    free(wn), free(wv);
    return rc;
}

void kc_restart_self(char **argv)
{
    (void)argv; /* the command line as it was given: Windows passes one string */
    wchar_t exe[KC_PATH_MAX];
    DWORD n = GetModuleFileNameW(NULL, exe, KC_PATH_MAX);
    wchar_t *cmd = _wcsdup(GetCommandLineW());
    STARTUPINFOW si = {.cb = sizeof(si)};
    PROCESS_INFORMATION pi;
    if (n == 0 || n >= KC_PATH_MAX || !cmd ||
        !CreateProcessW(exe, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) {
        free(cmd);
        set_errno();
        return;
    }
    CloseHandle(pi.hThread);
    WaitForSingleObject(pi.hProcess, INFINITE);
    DWORD code = 1;
    GetExitCodeProcess(pi.hProcess, &code);
    /* the hung launch may hold this process's threads: leave at once */
    ExitProcess(code);
}

static void (*interrupt_handler)(void);
static volatile LONG interrupted;

static BOOL WINAPI on_ctrl(DWORD event)
{
    if (event != CTRL_C_EVENT || !interrupt_handler)
        return FALSE;
    if (InterlockedExchange(&interrupted, 1))
        return FALSE; /* the second: the default, which ends the process */
    interrupt_handler();
    return TRUE;
}

void kc_on_interrupt(void (*on_interrupt)(void))
{
    interrupt_handler = on_interrupt;
    InterlockedExchange(&interrupted, 0);
    SetConsoleCtrlHandler(on_ctrl, on_interrupt != NULL);
}

void kc_write_stderr(const char *msg)
{
    _write(2, msg, (unsigned)strlen(msg));
}
