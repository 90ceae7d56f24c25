/*
 * test_replay.c — reading recorded spaces (plain, gzip, truncated, a cut
 * gzip stream, failed configurations, values matched by meaning), the
 * JSON repair on its own, and `kc tune --replay` end to end: its JSON
 * report and its exit statuses.
 */
#include "kc_test.h"

#include "kc_tune.h"
#include "tune_private.h"

#include <jansson.h>
#include <math.h>
#include <sys/wait.h>

#define DATA(f) KC_SOURCE_DIR "/tests/tuner/data/" f /* no parentheses: it joins other literals */
#define KC_BIN KC_BINARY_DIR "/tools/kc"

static kc_tune_replay *load(const char *path, kc_tune_replay_info *info)
{
    char err[512];
    kc_tune_replay *r = kc_tune_replay_load(path, err, sizeof(err));
    if (!r)
        fail_msg("%s", err);
    kc_tune_replay_get_info(r, info);
    return r;
}

static double time_of(kc_tune_replay *r, int a, int b, int c)
{
    return kc_tune_replay_measure(r, (int[]){a, b, c});
}

/* ---- reading ----------------------------------------------------------- */

/* small.json: block [16, 32, 64] x tile [1.0, 2.0, 4.0] x mode [plain,
 * shared]; 10 of 18 recorded, 3 failed, the optimum 1.5 at 32,2.0,shared. */
static void check_small(kc_tune_replay *r, const kc_tune_replay_info *in)
{
    const kc_tune_space *s = kc_tune_replay_space(r);
    assert_int_equal(3, s->ndims);
    assert_string_equal("block", s->names[0]); /* tune_params_keys order, not the object's */
    assert_string_equal("tile", s->names[1]);
    assert_string_equal("mode", s->names[2]);
    assert_int_equal(3, s->nvalues[0]);
    assert_int_equal(2, s->nvalues[2]);
    assert_non_null(s->values[0]);
    assert_int_equal(64, s->values[0][2]);
    assert_null(s->values[1]); /* reals */
    assert_null(s->values[2]); /* strings */
    assert_string_equal("2.0", kc_tune_replay_value_text(r, 1, 1));
    assert_string_equal("shared", kc_tune_replay_value_text(r, 2, 1));
    assert_string_equal("small_kernel", in->kernel);
    assert_string_equal("Test GPU", in->device);
    assert_true(in->product == 18);
    assert_true(in->optimum == 1.5);
    assert_memory_equal(((int[]){1, 1, 1}), in->optimum_point, 3 * sizeof(int));
    assert_true(time_of(r, 1, 1, 0) == 2.5);           /* recorded with "tile": 2, an int */
    assert_true(isinf(time_of(r, 0, 2, 0)));           /* CompilationFailedConfig */
    assert_true(isinf(time_of(r, 1, 2, 1)));           /* RuntimeFailedConfig */
    assert_false(s->valid(s->user, (int[]){0, 0, 1})); /* not recorded: broke a restriction */
    assert_true(s->valid(s->user, (int[]){1, 2, 1}));  /* failed, but valid */
}

static void reads_a_plain_file(void **state)
{
    (void)state;
    kc_tune_replay_info in;
    kc_tune_replay *r = load(DATA("small.json"), &in);
    assert_int_equal(10, in.size);
    assert_int_equal(3, in.failed);
    assert_int_equal(0, in.ignored);
    assert_int_equal(0, in.repaired_closers);
    check_small(r, &in);
    assert_true(time_of(r, 2, 1, 1) == 1.75); /* a record with only its key */
    kc_tune_replay_free(r);
}

static void reads_a_gzipped_file(void **state)
{
    (void)state;
    kc_tune_replay_info in;
    kc_tune_replay *r = load(DATA("small.json.gz"), &in);
    assert_int_equal(10, in.size);
    assert_int_equal(3, in.failed);
    check_small(r, &in);
    kc_tune_replay_free(r);
}

static void reads_a_file_cut_inside_a_record(void **state)
{
    (void)state;
    kc_tune_replay_info in;
    kc_tune_replay *r = load(DATA("truncated.json"), &in);
    assert_int_equal(3, in.repaired_closers);
    assert_true(in.repaired_bytes > 0);
    assert_int_equal(7, in.size); /* the eighth, half written, has no time */
    assert_int_equal(1, in.ignored);
    assert_int_equal(2, in.failed);
    assert_true(in.optimum == 1.5);
    kc_tune_replay_free(r);
}

static void reads_a_file_cut_after_a_comma(void **state)
{
    (void)state;
    kc_tune_replay_info in;
    kc_tune_replay *r = load(DATA("truncated_comma.json"), &in);
    assert_int_equal(2, in.repaired_closers);
    assert_int_equal(7, in.size);
    assert_int_equal(0, in.ignored);
    kc_tune_replay_free(r);
}

static void reads_a_cut_gzip_stream(void **state)
{
    (void)state;
    kc_tune_replay_info in;
    kc_tune_replay *r = load(DATA("cut_stream.json.gz"), &in);
    assert_true(in.repaired_closers > 0);
    assert_true(in.size > 50 && in.size < 171); /* what came out before the cut */
    assert_true(in.failed > 0);
    kc_tune_replay_free(r);
}

static void reports_unreadable_files(void **state)
{
    (void)state;
    char err[512];
    assert_null(kc_tune_replay_load(DATA("absent.json"), err, sizeof(err)));
    ASSERT_CONTAINS(err, "cannot open");
    ASSERT_CONTAINS(err, "absent.json");
    assert_null(kc_tune_replay_load(DATA("../test_replay.c"), err, sizeof(err)));
    ASSERT_CONTAINS(err, "not valid JSON");
    assert_null(kc_tune_replay_load(DATA("make_fixtures.py"), err, sizeof(err)));
    ASSERT_CONTAINS(err, "not valid JSON");
}

/* ---- the repair on its own ------------------------------------------------ */

static void repaired(const char *in, const char *expect, int closers)
{
    kc_buf b = {0};
    kc_buf_puts(&b, in);
    kc_tune_repair r = kc_tune_json_repair(&b);
    kc_buf_putc(&b, 0);
    if (strcmp(b.data, expect) != 0 || r.closers != closers)
        fail_msg("repair of '%s': got '%s' (%d closers), expected '%s' (%d)", in, b.data, r.closers, expect,
                 closers);
    kc_buf_free(&b);
}

static void repair_cuts_back_to_a_complete_value(void **state)
{
    (void)state;
    repaired("{\"a\": [1, 2]}", "{\"a\": [1, 2]}", 0);     /* whole: untouched */
    repaired("{\"a\": [1, 2", "{\"a\": [1]}", 2);          /* "2" may be half of "25" */
    repaired("{\"a\": 1,", "{\"a\": 1}", 1);               /* trailing comma */
    repaired("{\"a\": 1, \"b\":", "{\"a\": 1}", 1);        /* a key without value */
    repaired("{\"a\": 1, \"b\": \"x,]}", "{\"a\": 1}", 1); /* brackets in a string */
    repaired("{\"a\": \"q\\\"}\", \"b\": [", "{\"a\": \"q\\\"}\", \"b\": []}", 2); /* escapes */
    repaired("{\"a\": {\"b\": {}", "{\"a\": {\"b\": {}}}", 2);
    repaired("[{\"t\": 1}, {\"t\": 2}]  \n", "[{\"t\": 1}, {\"t\": 2}]  \n", 0);
}

/* ---- kc tune --replay ------------------------------------------------------ */

static int kc(const char *args, kc_buf *out)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s tune %s 2>&1", KC_BIN, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
        kc_buf_append(out, chunk, n);
    kc_buf_putc(out, 0);
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void replay_json_has_the_keys(void **state)
{
    (void)state;
    kc_buf out = {0};
    assert_int_equal(
        0, kc("--replay " DATA("small.json") " --strategy exhaustive --budget 10 --repeat 3 --json", &out));
    json_error_t e;
    json_t *o = json_loads(out.data, 0, &e);
    if (!o)
        fail_msg("not one JSON object (%s):\n%s", e.text, out.data);
    static const char *keys[] = {"space_size",       "optimum",  "runs",   "mean_fraction_of_optimum",
                                 "mean_evaluations", "strategy", "budget", "optimum_config"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!json_object_get(o, keys[i]))
            fail_msg("no key %s in:\n%s", keys[i], out.data);
    assert_int_equal(10, json_integer_value(json_object_get(o, "space_size")));
    assert_true(json_number_value(json_object_get(o, "optimum")) == 1.5);
    assert_int_equal(3, json_integer_value(json_object_get(o, "runs")));
    assert_true(json_number_value(json_object_get(o, "mean_fraction_of_optimum")) == 1.0);
    assert_true(json_number_value(json_object_get(o, "mean_evaluations")) == 10.0);
    assert_string_equal("shared",
                        json_string_value(json_object_get(json_object_get(o, "optimum_config"), "mode")));
    json_decref(o);
    kc_buf_free(&out);
}

static void replay_text_names_the_figures(void **state)
{
    (void)state;
    kc_buf out = {0};
    assert_int_equal(
        0, kc("--replay " DATA("small.json.gz") " --budget-fraction 0.25 --repeat 4 --seed 9", &out));
    ASSERT_CONTAINS(out.data, "10 configurations (3 failed)");
    ASSERT_CONTAINS(out.data, "optimum     1.5: block=32 tile=2.0 mode=shared");
    ASSERT_CONTAINS(out.data, "budget      3 evaluations (ceil(0.25 x 10))");
    ASSERT_CONTAINS(out.data, "seeds 9..12");
    ASSERT_CONTAINS(out.data, "mean fraction of optimum");
    ASSERT_CONTAINS(out.data, "mean evaluations          3.0");
    kc_buf_free(&out);
}

static void replay_errors_have_messages_and_statuses(void **state)
{
    (void)state;
    static const struct {
        const char *args;
        int status;
        const char *says;
    } cases[] = {
        {"--replay " DATA("absent.json"), 1, "cannot open"},
        {"--replay " DATA("../CMakeLists.txt"), 1, "not valid JSON"},
        {"--replay " DATA("small.json") " --strategy magic", 1, "unknown strategy 'magic'"},
        {"--replay " DATA("small.json") " --budget 0", 2, "takes a number >= 1"},
        {"--replay " DATA("small.json") " --budget-fraction 0", 1, "above 0"},
        {"--replay " DATA("small.json") " --repeat 0", 1, "--repeat"},
        {"--replay " DATA("small.json") " --budget ten", 2, "takes a number >= 1"},
        {"--replay " DATA("small.json") " --budget 5 --budget-fraction 0.5", 2, "not both"},
        {"--replay", 2, "needs a value"},
        {"--frobnicate", 2, "unknown option"},
        {"", 2, "give a bundle (kc tune BUNDLE) or --replay FILE"},
        {"absent.kcb", 1, "cannot open bundle 'absent.kcb'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kc_buf out = {0};
        int st = kc(cases[i].args, &out);
        if (st != cases[i].status)
            fail_msg("kc tune %s: exit %d, expected %d:\n%s", cases[i].args, st, cases[i].status, out.data);
        ASSERT_CONTAINS(out.data, cases[i].says);
        kc_buf_free(&out);
    }
}

static void list_strategies_names_them_all(void **state)
{
    (void)state;
    kc_buf out = {0};
    assert_int_equal(0, kc("--list-strategies", &out));
    for (const kc_tune_strategy *s = kc_tune_strategies; s->name; s++)
        ASSERT_CONTAINS(out.data, s->name);
    kc_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_a_plain_file),
        cmocka_unit_test(reads_a_gzipped_file),
        cmocka_unit_test(reads_a_file_cut_inside_a_record),
        cmocka_unit_test(reads_a_file_cut_after_a_comma),
        cmocka_unit_test(reads_a_cut_gzip_stream),
        cmocka_unit_test(reports_unreadable_files),
        cmocka_unit_test(repair_cuts_back_to_a_complete_value),
        cmocka_unit_test(replay_json_has_the_keys),
        cmocka_unit_test(replay_text_names_the_figures),
        cmocka_unit_test(replay_errors_have_messages_and_statuses),
        cmocka_unit_test(list_strategies_names_them_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
