/*
 * test_kir_golden.c — kir printed for small kernels, compared with the
 * expected text beside them (tests/ir/golden/NAME.kc -> NAME.kir). A first
 * line "// golden: --variant V --after PASS" picks the variant and stops
 * the pipeline early. KC_UPDATE_GOLDEN=1 rewrites the .kir files; review
 * the diff before committing it.
 */
#include "kc_test.h"

#include <dirent.h>

#include "kc_dsl.h"
#include "kc_ir.h"

static void option(const char *line, const char *name, char *out, size_t n)
{
    out[0] = 0;
    const char *p = strstr(line, name);
    if (!p)
        return;
    p += strlen(name);
    while (*p == ' ')
        p++;
    size_t k = 0;
    while (p[k] && p[k] != ' ' && p[k] != '\n' && k + 1 < n)
        k++;
    memcpy(out, p, k);
    out[k] = 0;
}

/* Compiles every kernel of a file as its golden header asks. */
static char *render(const char *path)
{
    kc_ctx c;
    kc_ctx_init(&c, stderr);
    kc_buf out = {0};
    kc_program *p = kc_dsl_parse(&c, path);
    assert_non_null(p);
    const char *text = c.src.files[p->main_file]->text;
    char variant[256] = "", after[64] = "";
    if (strncmp(text, "// golden:", 10) == 0) {
        const char *eol = strchr(text, '\n');
        char line[512];
        snprintf(line, sizeof(line), "%.*s", (int)(eol - text), text);
        option(line, "--variant", variant, sizeof(variant));
        option(line, "--after", after, sizeof(after));
    }
    for (int i = 0; i < p->funcs.len; i++) {
        const kc_func *f = p->funcs.items[i];
        if (!f->is_kernel)
            continue;
        kc_ir_binding b;
        char err[256];
        if (*variant)
            assert_true(kc_ir_parse_binding(&c.arena, p, f, variant, &b, err, sizeof(err)));
        else
            b = kc_ir_default_binding(&c.arena, p, f);
        kc_ir_module *m = kc_ir_compile(&c.arena, &c.diag, p, f, &b, *after ? after : NULL);
        assert_non_null(m);
        assert_true(kc_ir_validate(m, "golden"));
        kc_ir_print(&out, m);
    }
    kc_ctx_free(&c);
    return kc_buf_take(&out);
}

static void golden(void **state)
{
    (void)state;
    const char *dir = KC_SRC("tests/ir/golden");
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0, bad = 0;
    struct dirent *e;
    bool update = getenv("KC_UPDATE_GOLDEN") != NULL;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".kc") != 0)
            continue;
        char kc[4096], kir[4096];
        snprintf(kc, sizeof(kc), "%s/%s", dir, e->d_name);
        snprintf(kir, sizeof(kir), "%s/%.*s.kir", dir, (int)(len - 3), e->d_name);
        char *got = render(kc);
        n++;
        if (update) {
            kc_write_file_atomic(kir, got, strlen(got));
        } else {
            char *want = kc_read_file(kir, NULL);
            if (!want || strcmp(want, got) != 0) {
                fprintf(stderr, "golden mismatch for %s\n--- expected (%s)\n%s\n--- got\n%s\n", kc, kir,
                        want ? want : "(missing)", got);
                bad++;
            }
            free(want);
        }
        free(got);
    }
    closedir(d);
    assert_true(n >= 5);
    assert_int_equal(0, bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(golden)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
