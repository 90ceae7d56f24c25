/*
 * kc_test_win.h — the POSIX calls kc's tests use, on Windows (mingw-w64):
 * the runtime tests and kc's own run there under Wine (docs/windows.md).
 * kc_test.h includes it in place of <fnmatch.h> and <sys/wait.h>.
 */
#ifndef KC_TEST_WIN_H
#define KC_TEST_WIN_H

#include <direct.h>
#include <io.h>
#include <process.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include <psapi.h>

/* fnmatch for the patterns tests are run with: '*' and '?' */
static inline int kc_test_fnmatch(const char *p, const char *s)
{
    if (!*p)
        return *s ? 1 : 0;
    if (*p == '*')
        return kc_test_fnmatch(p + 1, s) == 0 || (*s && kc_test_fnmatch(p, s + 1) == 0) ? 0 : 1;
    return *s && (*p == '?' || *p == *s) ? kc_test_fnmatch(p + 1, s + 1) : 1;
}
#define fnmatch(pattern, string, flags) kc_test_fnmatch(pattern, string)

/* the tests set and clear variables for themselves and what they start */
#define setenv(name, value, overwrite) _putenv_s(name, value)
#define unsetenv(name) _putenv_s(name, "")

/* commands run through cmd.exe; _pclose gives the exit code itself */
#define popen _popen
#define pclose _pclose
#define WIFEXITED(status) ((status) != -1)
#define WEXITSTATUS(status) (status)

static inline char *mkdtemp(char *tmpl)
{
    if (_mktemp_s(tmpl, strlen(tmpl) + 1) != 0)
        return NULL;
    return _mkdir(tmpl) == 0 ? tmpl : NULL;
}

static inline void *memmem(const void *hay, size_t n, const void *needle, size_t m)
{
    const char *h = hay;
    for (size_t i = 0; m <= n && i <= n - m; i++)
        if (memcmp(h + i, needle, m) == 0)
            return (void *)(h + i);
    return NULL;
}

/* rm -rf, for the tests' temporary folders (no rm in cmd.exe) */
static inline int kc_test_remove_tree(const char *dir)
{
    char pattern[MAX_PATH + 8], full[2 * MAX_PATH];
    snprintf(pattern, sizeof(pattern), "%s\\*", dir);
    WIN32_FIND_DATAA e;
    HANDLE h = FindFirstFileA(pattern, &e);
    int rc = 0;
    if (h != INVALID_HANDLE_VALUE) {
        do {
            if (strcmp(e.cFileName, ".") == 0 || strcmp(e.cFileName, "..") == 0)
                continue;
            snprintf(full, sizeof(full), "%s\\%s", dir, e.cFileName);
            if (e.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
                rc |= kc_test_remove_tree(full);
            else if (!DeleteFileA(full))
                rc = -1;
        } while (FindNextFileA(h, &e));
        FindClose(h);
    }
    return RemoveDirectoryA(dir) ? rc : -1;
}

/* dlfcn */
#define RTLD_NOW 0
#define RTLD_LAZY 0
#define RTLD_LOCAL 0
static inline void *dlopen(const char *path, int flags)
{
    (void)flags;
    return (void *)LoadLibraryA(path);
}
static inline void *dlsym(void *lib, const char *name)
{
    FARPROC f = GetProcAddress((HMODULE)lib, name);
    void *p;
    memcpy(&p, &f, sizeof(p));
    return p;
}
static inline int dlclose(void *lib)
{
    return FreeLibrary((HMODULE)lib) ? 0 : -1;
}
static inline const char *dlerror(void)
{
    return "LoadLibrary failed";
}

#endif
