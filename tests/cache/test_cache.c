/*
 * test_cache.c — the tuning cache: round trips, migration, merging
 * exports, clearing, the Kernel Tuner export read back by replay, and
 * durability: a writer killed with SIGKILL loses at most the result in
 * flight.
 */
#include "kc_test.h"

#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "kc_cache.h"
#include "kc_tune.h"

static char dir[] = "/tmp/kc-cache-test-XXXXXX";

static const char *path(const char *name)
{
    static char buf[8][256];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

static kc_cache *open_fresh(const char *name)
{
    char err[256];
    remove(path(name));
    kc_cache *c = kc_cache_open(path(name), err, sizeof(err));
    if (!c)
        fail_msg("%s", err);
    return c;
}

static kc_cache_key key(const char *variant, const char *shape)
{
    return (kc_cache_key){"saxpy", "hash1", "0.1.0", "vulkan:10005:0:llvmpipe:1", "llvmpipe", "vulkan", shape, variant};
}

static void round_trip(void **state)
{
    (void)state;
    kc_cache *c = open_fresh("rt.db");
    char err[256];
    kc_cache_key k = key("WG=64,TM=1", "n=48000");
    kc_cache_result r = {KC_RESULT_OK, 1234.5, 31, 0.02, NULL}, got;
    assert_false(kc_cache_get(c, &k, &got, NULL));
    assert_true(kc_cache_put(c, &k, &r, err, sizeof(err)));
    assert_true(kc_cache_get(c, &k, &got, NULL));
    assert_int_equal(KC_RESULT_OK, got.status);
    assert_true(got.time_ns == 1234.5 && got.samples == 31);
    kc_cache_key k2 = key("WG=256,TM=8", "n=48000");
    kc_cache_result f = {KC_RESULT_VERIFY_FAILED, 0, 3, 0, "relative L2 0.4 > 1e-05"};
    assert_true(kc_cache_put(c, &k2, &f, err, sizeof(err)));
    kc_arena a;
    kc_arena_init(&a);
    assert_true(kc_cache_get(c, &k2, &got, &a));
    assert_int_equal(KC_RESULT_VERIFY_FAILED, got.status);
    assert_string_equal("relative L2 0.4 > 1e-05", got.detail);
    kc_arena_free(&a);
    kc_cache_key other = k;
    other.source_hash = "hash2"; /* another version of the kernel: a new configuration */
    assert_false(kc_cache_get(c, &other, &got, NULL));
    kc_buf out = {0};
    assert_true(kc_cache_list(c, NULL, true, &out));
    ASSERT_CONTAINS(out.data, "\"kernel\":\"saxpy\"");
    ASSERT_CONTAINS(out.data, "\"status\":\"verify_failed\"");
    ASSERT_CONTAINS(out.data, "\"time_ns\":null");
    ASSERT_CONTAINS(out.data, "\"variant\":\"WG=64,TM=1\"");
    kc_buf_free(&out);
    kc_cache_close(c);
}

static void migrations_and_versions(void **state)
{
    (void)state;
    char err[256];
    sqlite3 *db;
    remove(path("future.db"));
    sqlite3_open(path("future.db"), &db);
    sqlite3_exec(db, "PRAGMA user_version = 99;", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_null(kc_cache_open(path("future.db"), err, sizeof(err)));
    ASSERT_CONTAINS(err, "newer than this kc reads");
    FILE *f = fopen(path("junk.db"), "w");
    fputs("this is not a database, it is text long enough to look like a header.........................", f);
    fclose(f);
    assert_null(kc_cache_open(path("junk.db"), err, sizeof(err)));
    kc_cache *c = open_fresh("v.db");
    kc_cache_close(c);
    c = kc_cache_open(path("v.db"), err, sizeof(err)); /* reopening migrates nothing */
    assert_non_null(c);
    kc_cache_close(c);
}

static void export_import_merge(void **state)
{
    (void)state;
    char err[256];
    kc_cache *a = open_fresh("a.db"), *b = open_fresh("b.db");
    kc_cache_key k1 = key("WG=64,TM=1", "n=1"), k2 = key("WG=64,TM=2", "n=1"), k3 = key("WG=64,TM=4", "n=1");
    kc_cache_result few = {KC_RESULT_OK, 100, 5, 0.1, NULL}, many = {KC_RESULT_OK, 120, 50, 0.01, NULL};
    kc_cache_result failed = {KC_RESULT_TIMEOUT, 0, 1, 0, "over 2 s"};
    kc_cache_put(a, &k1, &few, err, sizeof(err));
    kc_cache_put(b, &k1, &many, err, sizeof(err)); /* b has more samples: b wins */
    kc_cache_put(a, &k2, &many, err, sizeof(err));
    kc_cache_put(b, &k2, &failed, err, sizeof(err)); /* a failure with fewer samples never beats a time */
    kc_cache_put(b, &k3, &few, err, sizeof(err));
    kc_cache_put_space(b, "saxpy", "hash1", "WG=64,128;TM=1,2,4", err, sizeof(err));
    assert_true(kc_cache_export(b, NULL, path("b.json"), err, sizeof(err)));
    long added, replaced, kept;
    assert_true(kc_cache_import(a, path("b.json"), &added, &replaced, &kept, err, sizeof(err)));
    assert_int_equal(1, added);
    assert_int_equal(1, replaced);
    assert_int_equal(1, kept);
    kc_cache_result got;
    kc_cache_get(a, &k1, &got, NULL);
    assert_int_equal(50, got.samples);
    kc_cache_get(a, &k2, &got, NULL);
    assert_int_equal(KC_RESULT_OK, got.status);
    assert_false(kc_cache_import(a, path("missing.json"), &added, &replaced, &kept, err, sizeof(err)));
    kc_cache_filter f = {"saxpy", NULL, NULL, NULL};
    assert_int_equal(3, kc_cache_clear(a, &f, err, sizeof(err)));
    assert_int_equal(0, kc_cache_clear(a, NULL, err, sizeof(err)));
    kc_cache_close(a);
    kc_cache_close(b);
}

static void kernel_tuner_export_replays(void **state)
{
    (void)state;
    char err[256];
    kc_cache *c = open_fresh("kt.db");
    const char *vs[] = {"WG=64,TM=1", "WG=64,TM=2", "WG=128,TM=1", "WG=128,TM=2"};
    double times[] = {4000, 2500, 3000, 1500};
    for (int i = 0; i < 4; i++) {
        kc_cache_key k = key(vs[i], "n=48000");
        kc_cache_result r = {i == 2 ? KC_RESULT_COMPILE_FAILED : KC_RESULT_OK, times[i], 9, 0.01, NULL};
        kc_cache_put(c, &k, &r, err, sizeof(err));
    }
    kc_cache_put_space(c, "saxpy", "hash1", "WG=64,128;TM=1,2", err, sizeof(err));
    kc_cache_filter f = {"saxpy", NULL, "n=48000", NULL};
    assert_true(kc_cache_export_kernel_tuner(c, &f, path("kt.json"), err, sizeof(err)));
    kc_tune_replay *r = kc_tune_replay_load(path("kt.json"), err, sizeof(err));
    if (!r)
        fail_msg("replay cannot read the export: %s", err);
    kc_tune_options o = {"exhaustive", 0, 0, 1};
    kc_tune_replay_stats st;
    double frac[1];
    long evals[1];
    assert_int_equal(0, kc_tune_replay_run(r, &o, 1, &st, frac, evals, err, sizeof(err)));
    kc_tune_replay_info info;
    kc_tune_replay_get_info(r, &info);
    assert_int_equal(4, info.size);
    assert_int_equal(1, info.failed);
    assert_true(info.optimum > 0.00149 && info.optimum < 0.00151); /* 1500 ns, in ms */
    assert_string_equal("saxpy", info.kernel);
    assert_true(frac[0] > 0.999);
    kc_tune_replay_free(r);
    kc_cache_close(c);
}

static void put_time(kc_cache *c, kc_cache_key k, kc_result_status status, double ns)
{
    char err[256];
    kc_cache_result r = {status, ns, 9, 0.01, NULL};
    if (!kc_cache_put(c, &k, &r, err, sizeof(err)))
        fail_msg("%s", err);
}

/* kc cache defaults --bundle: the variant to score beside the proposal,
 * here the one user names, for saxpy on llvmpipe only */
static const char *named_variant(void *user, const char *kernel, const char *device_key)
{
    return strcmp(kernel, "saxpy") || strstr(device_key, "H100") ? NULL : user;
}

/* `kc cache defaults`: the variant with the smallest geometric mean of its
 * slowdowns against each shape's winner, among those that ran correctly at
 * every shape; a barely tuned shape, an older source, cold timings and
 * other devices stay out of the comparison. */
static void defaults_are_proposed(void **state)
{
    (void)state;
    kc_cache *c = open_fresh("defaults.db");
    const char *shapes[] = {"n=1", "n=2", "n=3"};
    /* time per shape: A wins n=1, C wins n=2, B never wins but is never far */
    struct {
        const char *variant;
        double ns[3];
    } rows[] = {{"V=A", {100, 300, 100}}, {"V=B", {110, 110, 100}}, {"V=C", {200, 100, 100}}, {"V=D", {105, 120, 0}}};
    for (int v = 0; v < 4; v++)
        for (int s = 0; s < 3; s++)
            put_time(c, key(rows[v].variant, shapes[s]), rows[v].ns[s] ? KC_RESULT_OK : KC_RESULT_VERIFY_FAILED,
                     rows[v].ns[s]);
    put_time(c, key("V=A", "n=4"), KC_RESULT_OK, 50); /* one variant measured: left out */
    kc_cache_key cold = key("V=D", "n=3");
    cold.compiler = "0.1.0" KC_CACHE_COLD_MARK;
    put_time(c, cold, KC_RESULT_OK, 10);
    kc_cache_key old = key("V=E", "n=1");
    old.source_hash = "hash0";
    put_time(c, old, KC_RESULT_OK, 1);
    kc_cache_key other = key("V=F", "n=1");
    other.device_key = "vulkan:10de:2330:H100:1";
    other.device = "H100";
    put_time(c, other, KC_RESULT_OK, 7);
    /* the older source was measured earlier */
    assert_int_equal(SQLITE_OK, sqlite3_exec(kc_cache_db(c),
                                             "UPDATE results SET measured_at = '2020-01-01T00:00:00Z' "
                                             "WHERE source_hash = 'hash0'",
                                             NULL, NULL, NULL));
    kc_arena a;
    kc_arena_init(&a);
    kc_cache_proposal *p;
    kc_cache_filter f = {"saxpy", NULL, NULL, NULL};
    assert_int_equal(2, kc_cache_propose_defaults(c, &f, NULL, NULL, &p, &a));
    const kc_cache_proposal *here = strcmp(p[0].device, "llvmpipe") ? &p[1] : &p[0];
    const kc_cache_proposal *h100 = here == p ? &p[1] : &p[0];
    assert_string_equal("hash1", here->source_hash);
    assert_int_equal(3, here->shapes);
    assert_int_equal(1, here->shapes_left_out);
    assert_string_equal("n=4", here->left_out);
    assert_int_equal(3, here->candidates); /* D failed at n=3 */
    assert_string_equal("V=B", here->variant);
    assert_true(fabs(here->mean_slowdown - cbrt(1.1 * 1.1)) < 1e-9);
    assert_true(fabs(here->worst_slowdown - 1.1) < 1e-9);
    assert_string_equal("V=C", here->runner_up); /* cbrt(2) < cbrt(3) */
    assert_true(fabs(here->runner_up_mean - cbrt(2.0)) < 1e-9);
    assert_string_equal("V=F", h100->variant);
    assert_int_equal(1, h100->shapes);
    assert_null(h100->runner_up);
    assert_null(here->current); /* none was named */
    /* a current default scored beside the proposal: over the compared
     * shapes it ran at, and how many it failed or missed */
    const struct {
        const char *variant;
        double mean, worst;
        int missing;
    } named[] = {{"V=A", cbrt(3.0), 3, 0}, {"V=D", sqrt(1.05 * 1.2), 1.2, 1}, {"V=Z", NAN, 0, 3}};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(2, kc_cache_propose_defaults(c, &f, named_variant, (void *)named[i].variant, &p, &a));
        here = strcmp(p[0].device, "llvmpipe") ? &p[1] : &p[0];
        h100 = here == p ? &p[1] : &p[0];
        assert_string_equal(named[i].variant, here->current);
        assert_null(h100->current);
        assert_string_equal("V=B", here->variant); /* the proposal does not change */
        assert_int_equal(named[i].missing, here->current_missing);
        if (isnan(named[i].mean)) {
            assert_true(isnan(here->current_mean));
        } else {
            assert_true(fabs(here->current_mean - named[i].mean) < 1e-9);
            assert_true(fabs(here->current_worst - named[i].worst) < 1e-9);
        }
    }
    kc_cache_filter none = {"gemm", NULL, NULL, NULL};
    assert_int_equal(0, kc_cache_propose_defaults(c, &none, NULL, NULL, &p, &a));
    kc_arena_free(&a);
    kc_cache_close(c);
}

/* A child records results and is killed with SIGKILL; every result it had
 * committed survives, and the cache opens cleanly. */
static void sigkill_loses_nothing_committed(void **state)
{
    (void)state;
    remove(path("kill.db"));
    int fds[2];
    assert_int_equal(0, pipe(fds));
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        char err[256];
        kc_cache *c = kc_cache_open(path("kill.db"), err, sizeof(err));
        for (int i = 0;; i++) {
            char v[32];
            snprintf(v, sizeof(v), "WG=%d", i);
            kc_cache_key k = key(v, "n=1");
            kc_cache_result r = {KC_RESULT_OK, 1000.0 + i, 7, 0.01, NULL};
            if (!kc_cache_put(c, &k, &r, err, sizeof(err)))
                _exit(3);
            if (write(fds[1], &i, sizeof(i)) != sizeof(i)) /* committed: tell the parent */
                _exit(4);
        }
    }
    close(fds[1]);
    int last = -1, i;
    while (last < 300 && read(fds[0], &i, sizeof(i)) == sizeof(i))
        last = i;
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    while (read(fds[0], &i, sizeof(i)) == sizeof(i))
        last = i;
    close(fds[0]);
    assert_true(WIFSIGNALED(status));
    char err[256];
    kc_cache *c = kc_cache_open(path("kill.db"), err, sizeof(err));
    assert_non_null(c);
    long n = 0;
    kc_buf out = {0};
    kc_cache_list(c, NULL, true, &out);
    for (const char *p = out.data; (p = strchr(p, '\n')); p++)
        n++;
    kc_buf_free(&out);
    /* everything reported committed is there; at most one more was in flight */
    assert_true(n >= last + 1 && n <= last + 2);
    kc_cache_close(c);
}

static long count_results(kc_cache *c)
{
    long n = 0;
    kc_buf out = {0};
    kc_cache_list(c, NULL, true, &out);
    for (const char *p = out.data; p && (p = strchr(p, '\n')); p++)
        n++;
    kc_buf_free(&out);
    return n;
}

/* Eight kc processes open a cache that does not exist yet at the same
 * instant: each must get it whole (the migration once raced: "cannot
 * update the tuning cache to schema 1" in 3 of 6 trials). */
static void first_opens_at_once(void **state)
{
    (void)state;
    enum { KIDS = 8, TRIALS = 5 };
    for (int trial = 0; trial < TRIALS; trial++) {
        char name[32];
        snprintf(name, sizeof(name), "race%d.db", trial);
        remove(path(name));
        int gate[2];
        assert_int_equal(0, pipe(gate));
        pid_t pids[KIDS];
        for (int k = 0; k < KIDS; k++) {
            pids[k] = fork();
            if (pids[k] == 0) {
                close(gate[1]);
                char b;
                if (read(gate[0], &b, 1) != 0) /* all start when the parent closes the gate */
                    _exit(5);
                char err[256], v[32];
                kc_cache *c = kc_cache_open(path(name), err, sizeof(err));
                if (!c) {
                    fprintf(stderr, "child %d: %s\n", k, err);
                    _exit(3);
                }
                snprintf(v, sizeof(v), "WG=%d", k);
                kc_cache_key key1 = key(v, "n=1");
                kc_cache_result r = {KC_RESULT_OK, 100.0 + k, 5, 0.01, NULL};
                bool ok = kc_cache_put(c, &key1, &r, err, sizeof(err));
                kc_cache_close(c);
                _exit(ok ? 0 : 4);
            }
        }
        close(gate[0]);
        close(gate[1]);
        for (int k = 0; k < KIDS; k++) {
            int status;
            waitpid(pids[k], &status, 0);
            assert_true(WIFEXITED(status));
            assert_int_equal(0, WEXITSTATUS(status));
        }
        char err[256];
        kc_cache *c = kc_cache_open(path(name), err, sizeof(err));
        assert_non_null(c);
        assert_int_equal(KIDS, count_results(c));
        kc_cache_close(c);
    }
}

/* A cache truncated to 0 bytes is refused, never silently started over;
 * kc cache repair sets it aside and starts a new one. */
static void truncated_cache_is_refused_then_repaired(void **state)
{
    (void)state;
    kc_cache *c = open_fresh("trunc.db");
    char err[512];
    kc_cache_key k = key("WG=64", "n=1");
    kc_cache_result r = {KC_RESULT_OK, 10.0, 5, 0.01, NULL};
    assert_true(kc_cache_put(c, &k, &r, err, sizeof(err)));
    kc_cache_close(c);
    assert_int_equal(0, truncate(path("trunc.db"), 0));
    assert_null(kc_cache_open(path("trunc.db"), err, sizeof(err)));
    ASSERT_CONTAINS(err, "is empty (0 bytes): it was truncated, and kc will not start over silently");
    kc_buf report = {0};
    assert_false(kc_cache_check(path("trunc.db"), &report));
    ASSERT_CONTAINS(report.data, "truncated");
    kc_buf_free(&report);
    kc_cache_repair_report rep;
    assert_true(kc_cache_repair(path("trunc.db"), &rep, err, sizeof(err)));
    assert_int_equal(0, rep.results);
    struct stat st;
    assert_int_equal(0, stat(rep.aside, &st)); /* kept, not deleted */
    c = kc_cache_open(path("trunc.db"), err, sizeof(err));
    assert_non_null(c);
    assert_int_equal(0, count_results(c));
    kc_cache_close(c);
}

/* Zeroed pages in the middle: refused at open with what to do, found by
 * kc cache check, and kc cache repair keeps every row off those pages. */
static void damaged_pages_are_refused_then_repaired(void **state)
{
    (void)state;
    enum { ROWS = 3000 };
    kc_cache *c = open_fresh("pages.db");
    char err[512];
    sqlite3_exec(kc_cache_db(c), "BEGIN", NULL, NULL, NULL);
    for (int i = 0; i < ROWS; i++) {
        char v[32];
        snprintf(v, sizeof(v), "WG=%d,TM=%d", i, i % 7);
        kc_cache_key k = key(v, "n=48000");
        kc_cache_result r = {KC_RESULT_OK, 1000.0 + i, 9, 0.02, NULL};
        assert_true(kc_cache_put(c, &k, &r, err, sizeof(err)));
    }
    sqlite3_exec(kc_cache_db(c), "COMMIT", NULL, NULL, NULL);
    kc_cache_close(c); /* the last close checkpoints the log into the file */
    FILE *f = fopen(path("pages.db"), "r+b");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    assert_true(size > 40 * 4096);
    static char zeros[2 * 4096];
    fseek(f, (size / 4096 / 2) * 4096, SEEK_SET); /* two pages in the middle */
    assert_int_equal(sizeof(zeros), fwrite(zeros, 1, sizeof(zeros), f));
    fclose(f);
    assert_null(kc_cache_open(path("pages.db"), err, sizeof(err)));
    ASSERT_CONTAINS(err, "is damaged");
    ASSERT_CONTAINS(err, "kc cache repair");
    kc_buf report = {0};
    assert_false(kc_cache_check(path("pages.db"), &report));
    ASSERT_CONTAINS(report.data, "damaged");
    kc_buf_free(&report);
    kc_cache_repair_report rep;
    assert_true(kc_cache_repair(path("pages.db"), &rep, err, sizeof(err)));
    fprintf(stderr, "    repair kept %ld of %d results, %ld skips\n", rep.results, ROWS, rep.skips);
    assert_true(rep.results >= ROWS * 8 / 10 && rep.results < ROWS);
    c = kc_cache_open(path("pages.db"), err, sizeof(err));
    assert_non_null(c);
    assert_int_equal(rep.results, count_results(c));
    kc_cache_close(c);
    report = (kc_buf){0};
    assert_true(kc_cache_check(path("pages.db"), &report));
    kc_buf_free(&report);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(migrations_and_versions),
        cmocka_unit_test(export_import_merge),
        cmocka_unit_test(kernel_tuner_export_replays),
        cmocka_unit_test(defaults_are_proposed),
        cmocka_unit_test(sigkill_loses_nothing_committed),
        cmocka_unit_test(first_opens_at_once),
        cmocka_unit_test(truncated_cache_is_refused_then_repaired),
        cmocka_unit_test(damaged_pages_are_refused_then_repaired),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
