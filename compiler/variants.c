/*
 * variants.c — a kernel's search space: the product of the tunables it
 * uses (directly or through helpers), filtered by KC_REQUIRE. Bindings
 * are written "WG=64,TM=4" in declaration order, the form the runtime's
 * kcrt_kernel_get_variant and the tuning cache use.
 */
#include "ir_private.h"

#include "kc_dsl.h"

#include <stdlib.h>
#include <string.h>

int kc_ir_kernel_tunables(const kc_program *p, const kc_func *k, const kc_tunable **out, int max)
{
    int n = 0;
    for (int i = 0; i < p->tunables.len; i++) {
        const kc_tunable *t = p->tunables.items[i];
        for (int j = 0; j < k->tunables.len; j++)
            if (k->tunables.items[j] == t && n < max)
                out[n++] = t;
    }
    return n;
}

bool kc_ir_binding_lookup(void *binding, const char *name, int64_t *value)
{
    const kc_ir_binding *b = binding;
    for (int i = 0; i < b->n; i++)
        if (strcmp(b->names[i], name) == 0) {
            *value = b->values[i];
            return true;
        }
    return false;
}

typedef struct scope_lookup {
    const kc_program *p;
    const kc_ir_binding *b;
} scope_lookup;

/* Tunables the binding does not name take their defaults. */
static bool lookup_with_defaults(void *user, const char *name, int64_t *value)
{
    scope_lookup *s = user;
    if (kc_ir_binding_lookup((void *)s->b, name, value))
        return true;
    for (int i = 0; i < s->p->tunables.len; i++) {
        const kc_tunable *t = s->p->tunables.items[i];
        if (strcmp(t->name, name) == 0) {
            *value = t->def;
            return true;
        }
    }
    return false;
}

typedef struct mentions {
    const kc_func *k;
    bool hit;
} mentions;

static void mentions_name(void *user, const char *name)
{
    mentions *m = user;
    for (int i = 0; i < m->k->tunables.len; i++)
        if (strcmp(((const kc_tunable *)m->k->tunables.items[i])->name, name) == 0)
            m->hit = true;
}

bool kc_ir_binding_allowed(const kc_program *p, const kc_func *k, const kc_ir_binding *b)
{
    scope_lookup s = {p, b};
    for (int i = 0; i < p->requires.len; i++) {
        const kc_require *r = p->requires.items[i];
        if (!r->cond)
            continue;
        mentions m = {k, false};
        kc_iexpr_each_name(r->cond, mentions_name, &m);
        if (!m.hit)
            continue;
        int64_t v;
        /* a constraint that cannot be evaluated (division by zero…) fails */
        if (!kc_iexpr_eval(r->cond, lookup_with_defaults, &s, &v, NULL, 0) || !v)
            return false;
    }
    return true;
}

static kc_ir_binding new_binding(kc_arena *a, const kc_tunable **ts, int n)
{
    kc_ir_binding b = {n, kc_arena_alloc(a, sizeof(char *) * (size_t)(n + 1)),
                       kc_arena_alloc(a, sizeof(int64_t) * (size_t)(n + 1))};
    for (int i = 0; i < n; i++) {
        b.names[i] = ts[i]->name;
        b.values[i] = ts[i]->def;
    }
    return b;
}

kc_ir_binding kc_ir_default_binding(kc_arena *a, const kc_program *p, const kc_func *k)
{
    const kc_tunable *ts[256];
    int n = kc_ir_kernel_tunables(p, k, ts, 256);
    return new_binding(a, ts, n);
}

long kc_ir_each_variant(kc_arena *a, const kc_program *p, const kc_func *k,
                        void (*fn)(void *user, const kc_ir_binding *b), void *user)
{
    const kc_tunable *ts[256];
    int n = kc_ir_kernel_tunables(p, k, ts, 256);
    kc_ir_binding b = new_binding(a, ts, n);
    int idx[256] = {0};
    long count = 0;
    for (;;) {
        for (int i = 0; i < n; i++)
            b.values[i] = ts[i]->values[idx[i]];
        if (kc_ir_binding_allowed(p, k, &b)) {
            count++;
            if (fn)
                fn(user, &b);
        }
        int i = n - 1; /* odometer: the last tunable varies fastest */
        while (i >= 0 && ++idx[i] == ts[i]->nvalues)
            idx[i--] = 0;
        if (i < 0)
            break;
    }
    return count;
}

const char *kc_ir_binding_text(kc_arena *a, const kc_ir_binding *b)
{
    kc_buf buf = {0};
    for (int i = 0; i < b->n; i++)
        kc_buf_printf(&buf, "%s%s=%lld", i ? "," : "", b->names[i], (long long)b->values[i]);
    const char *s = kc_arena_strdup(a, buf.data ? buf.data : "");
    kc_buf_free(&buf);
    return s;
}

bool kc_ir_parse_binding(kc_arena *a, const kc_program *p, const kc_func *k, const char *text,
                         kc_ir_binding *out, char *err, size_t errlen)
{
    *out = kc_ir_default_binding(a, p, k);
    const char *s = text;
    if (s && strcmp(s, "-") == 0) /* how `kc variants` writes a kernel without tunables */
        s = "";
    bool *given = kc_arena_alloc(a, sizeof(bool) * (size_t)(out->n + 1));
    while (s && *s) {
        const char *eq = strchr(s, '='), *comma = strchr(s, ',');
        if (!comma)
            comma = s + strlen(s);
        if (!eq || eq > comma) {
            snprintf(err, errlen, "expected NAME=VALUE in '%s'", text);
            return false;
        }
        int slot = -1;
        for (int i = 0; i < out->n; i++)
            if ((size_t)(eq - s) == strlen(out->names[i]) && strncmp(out->names[i], s, (size_t)(eq - s)) == 0)
                slot = i;
        if (slot < 0) {
            snprintf(err, errlen, "'%.*s' is not a tunable of kernel '%s'", (int)(eq - s), s, k->name);
            return false;
        }
        if (given[slot]) {
            snprintf(err, errlen, "%s is given twice", out->names[slot]);
            return false;
        }
        given[slot] = true;
        char *end;
        long long v = strtoll(eq + 1, &end, 10);
        if (end != comma || end == eq + 1) {
            snprintf(err, errlen, "'%.*s' is not an integer", (int)(comma - eq - 1), eq + 1);
            return false;
        }
        const kc_tunable *t = NULL;
        for (int i = 0; i < p->tunables.len; i++)
            if (strcmp(((const kc_tunable *)p->tunables.items[i])->name, out->names[slot]) == 0)
                t = p->tunables.items[i];
        bool listed = false;
        for (int i = 0; t && i < t->nvalues; i++)
            listed |= t->values[i] == v;
        if (!listed) {
            snprintf(err, errlen, "%lld is not one of the values of %s", v, out->names[slot]);
            return false;
        }
        out->values[slot] = v;
        s = *comma ? comma + 1 : comma;
    }
    if (!kc_ir_binding_allowed(p, k, out)) {
        snprintf(err, errlen, "variant %s breaks a KC_REQUIRE", kc_ir_binding_text(a, out));
        return false;
    }
    return true;
}
