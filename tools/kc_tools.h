/*
 * kc_tools.h — what the subcommands of the kc program share. Each
 * subcommand lives in its own cmd_*.c and is listed once in kc.c's table.
 * Exit codes: 0 success, 1 a user error (message on stderr), 2 bad usage.
 */
#ifndef KC_TOOLS_H
#define KC_TOOLS_H

#include <stdbool.h>
#include <stdio.h>

#include "kc_support.h"

enum { KC_EXIT_OK = 0, KC_EXIT_ERROR = 1, KC_EXIT_USAGE = 2 };

typedef struct kc_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command's name */
    const char *summary;               /* one line for `kc help` */
    const char *usage;                 /* the full text for `kc help CMD` */
} kc_command;

extern const kc_command kc_commands[];
/* main's argv, for kc tune to re-execute itself after a hung variant. */
extern char **kc_main_argv;
const kc_command *kc_find_command(const char *name);

/* A small option parser: long options with a value (--name VALUE or
 * --name=VALUE), short ones (-t VALUE, -o VALUE), flags, positionals. */
typedef struct kc_opt {
    const char *name;  /* "--variant" or "-t" */
    bool has_value;
} kc_opt;

typedef struct kc_args {
    const char *cmd;
    int argc;
    char **argv;
    int i;
    const char *value; /* of the option just returned */
    const char *positional;
} kc_args;

/* Returns the index in opts of the next option, -1 for a positional (in
 * args->positional), -2 at the end, -3 after printing a usage error. */
int kc_next_arg(kc_args *args, const kc_opt *opts, int nopts);
int kc_usage_error(const char *cmd, const char *fmt, ...) KC_PRINTF(2, 3);
/* --amdgpu-cov's value: "4" or "5"; false for anything else. */
bool kc_parse_amdgpu_cov(const char *value, int *cov);

/* -I DIR, given to the commands that read kernel files: folders besides
 * the kernel's own that #include may read (DESIGN.md §11). */
typedef struct kc_includes {
    const char *dirs[64];
    int n;
} kc_includes;
/* Adds -I's value; KC_EXIT_OK, or KC_EXIT_USAGE after saying why. */
int kc_includes_add(kc_includes *inc, const char *cmd, const char *dir);
/* Lets ctx read them; false after saying which is not a folder. */
struct kc_ctx;
bool kc_includes_apply(const kc_includes *inc, struct kc_ctx *ctx, const char *cmd);

/* The subcommands */
int kc_cmd_build(int argc, char **argv);
int kc_cmd_cache(int argc, char **argv);
int kc_cmd_check(int argc, char **argv);
int kc_cmd_emit(int argc, char **argv);
int kc_cmd_export(int argc, char **argv);
int kc_cmd_info(int argc, char **argv);
int kc_cmd_variants(int argc, char **argv);
int kc_cmd_tune(int argc, char **argv);
int kc_cmd_devices(int argc, char **argv);
int kc_cmd_run(int argc, char **argv);
int kc_cmd_bench(int argc, char **argv);
int kc_cmd_help(int argc, char **argv);

#endif
