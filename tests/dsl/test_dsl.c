/*
 * test_dsl.c — the front end: every refused construct with its located
 * message, features that must be accepted (and compile through kir), the
 * exact form of a diagnostic, recovery (all errors of a file), and the
 * annotated corpus in tests/dsl/corpus/.
 */
#include "kc_test.h"

#include <ctype.h>
#include <dirent.h>
#include <sys/stat.h>

#include "kc_dsl.h"
#include "kc_ir.h"

#define K "KC_KERNEL KC_WORKGROUP(64, 1, 1) KC_GRID(1, 1, 1)\n"

/* Parses src; returns the diagnostics text (owned by the caller). */
static char *diagnose(const char *src, bool *ok)
{
    kc_ctx c;
    kc_ctx_init(&c, NULL);
    kc_program *p = kc_dsl_parse_text(&c, "t.kc", src, strlen(src));
    *ok = p != NULL;
    for (int i = 0; p && i < p->funcs.len; i++) { /* every kernel through kir too */
        const kc_func *f = p->funcs.items[i];
        if (!f->is_kernel)
            continue;
        kc_ir_binding b = kc_ir_default_binding(&c.arena, p, f);
        if (!kc_ir_compile(&c.arena, &c.diag, p, f, &b, NULL))
            *ok = false;
    }
    char *text = kc_buf_take(&c.diag.text);
    kc_ctx_free(&c);
    return text;
}

/* ---- refused constructs ---------------------------------------------------- */

typedef struct refusal {
    const char *name, *src, *where, *message;
} refusal;

static const refusal refusals[] = {
    {"pointer variable", K "void k(float *x) {\n  float *p = x;\n}", "t.kc:3:9:", "pointer variables are not in the language"},
    {"pointer arithmetic", K "void k(float *x, float *y) {\n  y[0] = (x + 1)[0];\n}", "t.kc:3:13:", "pointer arithmetic"},
    {"dereference", K "void k(float *x) {\n  *x = 1.0f;\n}", "t.kc:3:3:", "pointer dereference"},
    {"direct recursion", "static int f(int n) { return n ? f(n - 1) : 0; }\n" K "void k(int *x) { x[0] = f(3); }",
     "t.kc:1:34:", "recursion is not in the language: 'f' calls 'f'"},
    {"mutual recursion",
     "static int g(int);\nstatic int f(int n) { return g(n); }\nstatic int g(int n) { return f(n); }\n" K
     "void k(int *x) { x[0] = f(3); }",
     "t.kc:", "recursion is not in the language"},
    {"function pointer", "static void (*fp)(void);\n" K "void k(float *x) { }", "t.kc:1:13:", "function pointers"},
    {"goto", K "void k(float *x) {\n  goto end;\n}", "t.kc:3:3:", "goto is not in the language"},
    {"global variable", "int counter;\n" K "void k(float *x) { }", "t.kc:1:5:", "global variables are not in the language"},
    {"varargs", K "void k(float *x, ...) { }", "t.kc:2:18:", "variadic functions"},
    {"string", K "void k(float *x) { x[0] = \"s\"; }", "t.kc:2:27:", "string literals"},
    {"char literal", K "void k(int *x) { x[0] = 'a'; }", "t.kc:2:25:", "character literals"},
    {"struct", "struct P { int a; };\n" K "void k(float *x) { }", "t.kc:1:1:", "structs are not in the language"},
    {"typedef", "typedef int T;\n" K "void k(float *x) { }", "t.kc:1:1:", "typedef"},
    {"double", K "void k(float *x) { double d = 1.0; }", "t.kc:2:20:", "'double' is not in the language"},
    {"function-like macro", "#define F(a) (a)\n" K "void k(float *x) { }", "t.kc:1:9:", "function-like macros"},
    {"#if", "#if 1\n#endif\n" K "void k(float *x) { }", "t.kc:1:2:", "#if expressions are not supported"},
    {"#line", "#line 10\n" K "void k(float *x) { }", "t.kc:1:2:", "#line is not supported"},
    {"#pragma unroll", K "void k(float *x) {\n#pragma unroll\n  for (int i = 0; i < 4; i++) x[i] = 0.0f;\n}",
     "t.kc:3:2:", "#pragma unroll is not supported"},
    {"include <other>", "#include <stdio.h>\n" K "void k(float *x) { }", "t.kc:1:10:", "<stdio.h> is not available"},
    {"missing include", "#include \"nowhere.kch\"\n" K "void k(float *x) { }", "t.kc:1:10:", "cannot open included file"},
    {"unterminated #ifdef", "#ifdef X\n" K "void k(float *x) { }", "t.kc:1:2:", "no #endif"},
    {"bad default", "KC_TUNE(W, 3, 1, 2)\n" K "void k(float *x) { x[0] = (float)W; }", "t.kc:1:12:",
     "not one of its values"},
    {"tune without values", "KC_TUNE(W, 3)\n" K "void k(float *x) { x[0] = (float)W; }", "t.kc:1:9:", "values to try"},
    {"float to int", K "void k(float *x) {\n  int i = x[0];\n}", "t.kc:3:11:", "can lose information"},
    {"float to half", K "void k(float *x) {\n  half h = x[0];\n}", "t.kc:3:12:", "can lose information"},
    {"long to int", K "void k(int *x) { long l = 5; x[0] = l; }", "t.kc:2:37:", "can lose information"},
    {"long parameter", K "void k(int *x, long l) { }", "t.kc:2:21:", "cannot be 'long'"},
    {"write const buffer", K "void k(const float *x) {\n  x[0] = 1.0f;\n}", "t.kc:3:3:", "declared const"},
    {"arg count", K "void k(float *x) { x[0] = sinf(1.0f, 2.0f); }", "t.kc:2:27:", "takes 1 argument"},
    {"undeclared", K "void k(float *x) { x[0] = y; }", "t.kc:2:27:", "'y' is not declared"},
    {"missing semicolon", K "void k(float *x) {\n  x[0] = 1.0f\n}", "t.kc:3:14:", "expected ';'"},
    {"unclosed brace", K "void k(float *x) {\n  x[0] = 1.0f;\n", "t.kc:2:18:", "never closed"},
    {"break outside", K "void k(float *x) { break; }", "t.kc:2:20:", "'break' outside"},
    {"continue in switch only",
     K "void k(int *x) { switch (x[0]) { case 1: continue; } }", "t.kc:2:42:", "'continue' outside a loop"},
    {"duplicate case", K "void k(int *x) {\n  switch (x[0]) { case 1: break; case 1: break; }\n}", "t.kc:3:34:",
     "duplicate case value 1"},
    {"nested case", K "void k(int *x) {\n  switch (x[0]) { case 0: { case 1: break; } }\n}", "t.kc:3:29:",
     "directly inside"},
    {"shared extent not constant", K "void k(int n, float *x) { KC_SHARED float t[n]; }", "t.kc:2:45:",
     "known when the kernel is compiled"},
    {"shared in helper", "static void h(void) { KC_SHARED float t[4]; }\n" K "void k(float *x) { h(); }", "t.kc:1:39:",
     "only be declared in a kernel"},
    {"shared initialiser", K "void k(float *x) { KC_SHARED float t[2] = {1.0f, 2.0f}; }", "t.kc:2:43:",
     "cannot have an initialiser"},
    {"dimension", K "void k(int *x) { x[0] = kc_global_id(3); }", "t.kc:2:38:", "must be 0, 1 or 2"},
    {"kernel returns value", K "int k(float *x) { return 1; }", "t.kc:2:5:", "must return void"},
    {"texel reads on a helper", "KC_TEXEL_READS(1) static float h(float v) { return v; }\n" K "void k(float *x) { }",
     "t.kc:1:1:", "KC_TEXEL_READS marks kernels"},
    {"texel reads over a parameter",
     "KC_KERNEL KC_TEXEL_READS(n > 4) KC_WORKGROUP(64, 1, 1) KC_GRID(1, 1, 1)\nvoid k(int n, const float *x) { }",
     "t.kc:1:26:", "KC_TEXEL_READS"},
    {"specialize on a helper", "KC_SPECIALIZE(n) static int h(int n) { return n; }\n" K "void k(float *x) { }",
     "t.kc:1:1:", "KC_SPECIALIZE marks kernels"},
    {"specialize a stranger", "KC_KERNEL KC_SPECIALIZE(op) KC_WORKGROUP(64, 1, 1) KC_GRID(1, 1, 1)\nvoid k(int n) { }",
     "t.kc:1:25:", "'op' in KC_SPECIALIZE is not a parameter of kernel 'k'"},
    {"specialize a float", "KC_KERNEL KC_SPECIALIZE(n, a) KC_WORKGROUP(64, 1, 1) KC_GRID(1, 1, 1)\nvoid k(int n, float a) { }",
     "t.kc:1:28:", "int, uint or bool scalars, and 'a' is not one"},
    {"specialize a buffer", "KC_KERNEL KC_SPECIALIZE(x) KC_WORKGROUP(64, 1, 1) KC_GRID(1, 1, 1)\nvoid k(const int *x) { }",
     "t.kc:1:25:", "and 'x' is not one"},
    {"specialize twice", "KC_KERNEL KC_SPECIALIZE(n, n) KC_WORKGROUP(64, 1, 1) KC_GRID(1, 1, 1)\nvoid k(int n) { }",
     "t.kc:1:28:", "'n' is named twice"},
    {"specialize an expression", "KC_KERNEL KC_SPECIALIZE(n + 1) KC_WORKGROUP(64, 1, 1) KC_GRID(1, 1, 1)\nvoid k(int n) { }",
     "t.kc:1:27:", "KC_SPECIALIZE takes parameter names"},
    {"specialize nine", "KC_KERNEL KC_SPECIALIZE(a, b, c, d, e, f, g, h, i) KC_WORKGROUP(64, 1, 1) KC_GRID(1, 1, 1)\n"
     "void k(int a, int b, int c, int d, int e, int f, int g, int h, int i) { }",
     "t.kc:1:49:", "KC_SPECIALIZE names 9 scalars, and a kernel may specialise at most 8"},
    {"component", K "void k(float *x) {\n  float4 v;\n  v.q = 1.0f;\n}", "t.kc:4:3:", "no component 'q'"},
    {"defined twice", K "void k(float *x) { }\n" K "void k(float *y) { }", "t.kc:4:6:", "defined twice"},
    {"calling a kernel", K "void a(float *x) { }\n" K "void b(float *x) { a(x); }", "t.kc:4:20:",
     "kernels cannot be called"},
    {"no workgroup", "KC_KERNEL KC_GRID(1, 1, 1) void k(float *x) { }", "t.kc:1:33:", "needs KC_WORKGROUP"},
    {"no grid", "KC_KERNEL KC_WORKGROUP(1, 1, 1) void k(float *x) { }", "t.kc:1:38:", "needs KC_GRID"},
    {"grid uses a float", "KC_KERNEL KC_WORKGROUP(1, 1, 1) KC_GRID(kc_cdiv(n, 2), 1, 1) void k(int m, float n) { }",
     "t.kc:1:41:", "kc_cdiv needs two integers"},
    {"workgroup too big", "KC_KERNEL KC_WORKGROUP(2048, 1, 1) KC_GRID(1, 1, 1) void k(float *x) { }", "t.kc:1:24:",
     "between 1 and 1024"},
    {"atomic on private", K "void k(int *x) { int a[2]; kc_atomic_add(&a[0], 1); }", "t.kc:2:42:",
     "buffer or of KC_SHARED"},
    {"atomic min on float", K "void k(float *x) { kc_atomic_min(&x[0], 1.0f); }", "t.kc:2:34:", "int and uint"},
    {"address elsewhere", K "void k(int *x) { int a = 1; x[0] = &a; }", "t.kc:2:36:", "'&' is only allowed"},
    {"shadowing a tunable", "KC_TUNE(N, 2, 2, 4)\n" K "void k(float *x) { int N = 1; }", "t.kc:3:24:",
     "shadows the tunable"},
    {"vector compare", K "void k(float4 *x) { bool b = x[0] < x[1]; }", "t.kc:2:35:", "cannot compare vectors"},
    {"float modulo", K "void k(float *x) { x[0] = x[1] % 2.0f; }", "t.kc:2:32:", "needs integers"},
    {"missing return", "static int f(int a) { if (a) return 1; }\n" K "void k(int *x) { x[0] = f(1); }",
     "t.kc:1:12:", "without returning a value"},
    {"helper writes const", "static void w(float *p) { p[0] = 1.0f; }\n" K "void k(const float *x) { w(x); }",
     "t.kc:3:28:", "this array is read-only"},
    {"index out of bounds", K "void k(float *x) { float a[4]; a[4] = 1.0f; }", "t.kc:2:34:", "out of bounds"},
    {"unroll runtime bound", K "void k(int n, float *x) {\n  KC_UNROLL for (int i = 0; i < n; i++) x[i] = 0.0f;\n}",
     "t.kc:3:13:", "not a compile-time constant"},
    {"require always false", "KC_REQUIRE(1 > 2)\n" K "void k(float *x) { }", "t.kc:1:1:", "always false"},
    {"sizeof", K "void k(float *x) { int s = sizeof(float); }", "t.kc:2:28:", "sizeof is not in the language"},
    {"label", K "void k(float *x) {\n  end: x[0] = 1.0f;\n}", "t.kc:3:3:", "labels are not in the language"},
    {"stray byte", K "void k(float *x) { x[0] = 1.0f; @ }", "t.kc:2:33:", "stray '@'"},
    {"NUL byte", K "void k(float *x) { x[0] = 1.0f; \x01 }", "t.kc:2:33:", "stray byte 0x01"},
    {"unterminated comment", K "void k(float *x) { } /* open", "t.kc:2:22:", "unterminated comment"},
    {"static local", K "void k(float *x) { static float s = 1.0f; }", "t.kc:2:20:", "static local variables"},
    {"reserved name", "static float __kc_mine(float v) { return v; }\n" K "void k(float *x) { x[0] = __kc_mine(1.0f); }",
     "t.kc:1:14:", "reserved for kc"},
    {"library macros stay inside", K "void k(uint *x) { x[0] = KC_NAN_BITS; }", "t.kc:2:26:",
     "'KC_NAN_BITS' is not declared"},
};

static void refused_constructs(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < KC_COUNT(refusals); i++) {
        const refusal *r = &refusals[i];
        bool ok;
        char *text = diagnose(r->src, &ok);
        char want[256];
        snprintf(want, sizeof(want), "%s", r->where);
        const char *at = strstr(text, want);
        const char *eol = at ? strchr(at, '\n') : NULL;
        bool found = at && strstr(at, r->message) && (!eol || strstr(at, r->message) < eol);
        if (ok || !found) {
            fprintf(stderr, "refusal '%s': expected \"%s ... %s\", got%s:\n%s\n", r->name, r->where, r->message,
                    ok ? " success" : "", text);
            bad++;
        }
        free(text);
    }
    assert_int_equal(0, bad);
}

/* ---- accepted features ------------------------------------------------------ */

static const char *const features[] = {
    /* every type, vector members and constructors */
    K "void k(int n, float f, half h, uint u, bool b, float4 *v4, half2 *h2, int4 *i4, uint2 *u2, float2 *f2,\n"
      "       half4 *h4, int2 *i2, uint4 *u4) {\n"
      "  long L = (long)n * 3; ulong UL = (ulong)u;\n"
      "  float4 v = kc_float4(f, 1.0f, 2.0f, 3.0f); v.w = v.x + v.y;\n"
      "  v4[0] = v * 2.0f + v4[1]; h2[0] = kc_half2(h, (half)1.0f);\n"
      "  i4[0] = kc_int4(n, 2, 3, 4) + i4[1]; u2[0] = kc_uint2(u, 1u);\n"
      "  f2[0] = kc_float2(f); h4[0].z = h * h; i2[0].y = (int)(L + (long)UL);\n"
      "  u4[0] = kc_uint4(1u, 2u, 3u, b ? 4u : 5u);\n"
      "}",
    /* extents over parameters, multi-dimensional buffers */
    "KC_KERNEL KC_WORKGROUP(8, 8, 1) KC_GRID(kc_cdiv(cout, 8), kc_cdiv(t, 8), 1)\n"
    "void conv(int cout, int cin, int k, int t, const float w[cout][cin * k], const float x[cin][t + k - 1],\n"
    "          float y[cout][t]) {\n"
    "  int o = kc_global_id(0), i = kc_global_id(1);\n"
    "  if (o >= cout || i >= t) return;\n"
    "  float acc = 0.0f;\n"
    "  for (int c = 0; c < cin; c++)\n"
    "    for (int j = 0; j < k; j++) acc += w[o][c * k + j] * x[c][i + j];\n"
    "  y[o][i] = acc;\n"
    "}",
    /* tunables in extents, loops, workgroup and grid; shared 2-D tiles; barriers */
    "KC_TUNE(BM, 16, 8, 16)\nKC_TUNE(TM, 2, 1, 2, 4)\nKC_REQUIRE(BM * TM <= 64)\n"
    "KC_KERNEL KC_WORKGROUP(BM, 1, 1) KC_GRID(kc_cdiv(n, BM * TM), 1, 1)\n"
    "void tiles(int n, const float *x, float *y) {\n"
    "  KC_SHARED float tile[BM][BM + 1];\n"
    "  float acc[TM] = {0};\n"
    "  int l = kc_local_id(0);\n"
    "  KC_UNROLL for (int t = 0; t < TM; t++) {\n"
    "    int i = (kc_group_id(0) * TM + t) * BM + l;\n"
    "    tile[l][t] = i < n ? x[i] : 0.0f;\n"
    "    kc_barrier();\n"
    "    acc[t] = tile[(l + 1) % BM][t];\n"
    "    kc_barrier();\n"
    "  }\n"
    "  KC_UNROLL for (int t = 0; t < TM; t++) { int i = (kc_group_id(0) * TM + t) * BM + l; if (i < n) y[i] = acc[t]; }\n"
    "}",
    /* every statement form */
    K "void stmts(int n, int *x) {\n"
      "  int s = 0, i = 0;\n"
      "  while (i < n) { if (x[i] < 0) { i++; continue; } s += x[i++]; if (s > 1000) break; }\n"
      "  do { s--; } while (s > 100);\n"
      "  for (;;) { if (s-- < 0) break; }\n"
      "  switch (s & 3) { case 0: s = 1; case 1: s += 2; break; case 2: { s = 7; break; } default: s = 0; }\n"
      "  s <<= 1; s >>= 1; s |= 4; s &= ~1; s ^= 3; s %= 5; s *= 2; s /= 3; s -= 1;\n"
      "  x[0] = s > 2 ? s : -s;\n"
      "  if (n == 0) return;\n"
      "  x[1] = n != 0 && x[2] > 0 || !(n < 3);\n"
      "}",
    /* helpers with array parameters, calling each other, early returns */
    "static float dot(const float *a, const float b[], int n) {\n"
    "  float s = 0.0f; for (int i = 0; i < n; i++) s = fmaf(a[i], b[i], s); return s; }\n"
    "static void scale(float row[4], float f) { for (int i = 0; i < 4; i++) row[i] *= f; }\n"
    "static int sign(float v) { if (v > 0.0f) return 1; if (v < 0.0f) return -1; return 0; }\n"
    "KC_KERNEL KC_WORKGROUP(4, 1, 1) KC_GRID(1, 1, 1)\n"
    "void helpers(const float *x, float *y, int *z) {\n"
    "  KC_SHARED float t[4][4];\n"
    "  float p[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}};\n"
    "  int l = kc_local_id(0);\n"
    "  t[l][0] = x[l]; kc_barrier();\n"
    "  scale(t[l], 2.0f); scale(p[1], 0.5f);\n"
    "  y[l] = dot(x, p[1], 4) + dot(t[l], y, 1);\n"
    "  z[l] = sign(y[l]);\n"
    "}",
    /* every built-in */
    K "void builtins(float *f, int *i, uint *u, half *h) {\n"
      "  int g = kc_global_id(0) + kc_local_id(1) + kc_group_id(2) + kc_group_size(0) + kc_num_groups(1);\n"
      "  g += kc_subgroup_size() + kc_subgroup_id() + kc_subgroup_local_id();\n"
      "  float a = f[g];\n"
      "  f[0] = sqrtf(a) + rsqrtf(a) + expf(a) + exp2f(a) + logf(a) + log2f(a) + powf(a, 2.0f);\n"
      "  f[1] = sinf(a) + cosf(a) + tanf(a) + tanhf(a) + erff(a) + fabsf(a) + floorf(a) + ceilf(a);\n"
      "  f[2] = roundf(a) + fminf(a, 1.0f) + fmaxf(a, 2.0f) + fmaf(a, a, a) + copysignf(a, -1.0f);\n"
      "  f[3] = min(a, 3.0f) + max(a, 4.0f) + clamp(a, 0.0f, 1.0f) + (float)kc_cdiv(g, 4);\n"
      "  f[4] = kc_fast_sqrtf(a) + kc_fast_rsqrtf(a) + kc_fast_expf(a) + kc_fast_exp2f(a) + kc_fast_logf(a);\n"
      "  f[5] = kc_fast_log2f(a) + kc_fast_powf(a, a) + kc_fast_sinf(a) + kc_fast_cosf(a) + kc_fast_tanf(a);\n"
      "  f[6] = kc_fast_tanhf(a) + kc_fast_divf(a, 3.0f) + kc_as_float(kc_as_uint(a)) + (float)kc_as_int(a);\n"
      "  f[6] += kc_no_contract(a * a + 1.0f);\n"
      "  f[7] = kc_subgroup_add(a) + kc_subgroup_min(a) + kc_subgroup_max(a);\n"
      "  f[8] = kc_subgroup_shuffle(a, 1) + kc_subgroup_broadcast(a, 0);\n"
      "  i[0] = kc_atomic_add(&i[1], 1) + kc_atomic_min(&i[2], g) + kc_atomic_max(&i[3], g);\n"
      "  i[4] = kc_atomic_xchg(&i[5], 7) + kc_atomic_cas(&i[6], 0, 1) + min(g, 3) + max(g, 1) + clamp(g, 0, 9);\n"
      "  u[0] = kc_atomic_add(&u[1], 2u) + kc_mul_hi(u[2], u[3]);\n"
      "  kc_atomic_add(&f[9], 1.5f);\n"
      "  h[0] = (half)sinf((float)h[1]) + h[2] * (half)2;\n"
      "  kc_barrier();\n"
      "}",
    /* preprocessor: defines, conditionals, include guards */
    "#include <kc.h>\n#define N 4\n#define SCALE (2.0f * 0.5f)\n#ifndef N\n#error no N\n#else\n#define HAVE_N\n#endif\n"
    "#ifdef HAVE_N\n" K "void pp(float y[N]) { y[N - 1] = SCALE; }\n#endif\n#undef N\n#ifdef N\n#error N still defined\n#endif\n",
    /* conversions the design allows without a cast */
    K "void conv(float *f, int *i, uint *u, half *h, long *l) {\n"
      "  f[0] = i[0]; f[1] = u[0]; f[2] = h[0]; l[0] = i[0]; u[1] = i[1]; i[2] = u[2];\n"
      "  h[1] = 1.0f; h[2] = h[3] * 2; f[3] = 1; i[3] = true; f[4] = f[5] * 0.5f;\n"
      "}",
    /* file-scope constants */
    "static const float TAPS[5] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};\nconst int R = 2;\n"
    "KC_KERNEL KC_WORKGROUP(64, 1, 1) KC_GRID(kc_cdiv(n, 64), 1, 1)\n"
    "void fir(int n, const float x[n + 4], float y[n]) {\n"
    "  int i = kc_global_id(0); if (i >= n) return;\n"
    "  float s = 0.0f; KC_UNROLL for (int k = -R; k <= R; k++) s += TAPS[k + R] * x[i + k + R];\n"
    "  y[i] = s;\n"
    "}",
    /* KC_MAY_ALIAS and prototypes */
    "static float twice(float);\n"
    "KC_KERNEL KC_MAY_ALIAS KC_WORKGROUP(64, 1, 1) KC_GRID(kc_cdiv(n, 64), 1, 1)\n"
    "void inplace(int n, float *a, float *b) { int i = kc_global_id(0); if (i < n) a[i] = twice(b[i]); }\n"
    "static float twice(float v) { return v + v; }\n",
    /* KC_TEXEL_READS over a tunable (compiler/spirv/spirv.c) */
    "KC_TUNE(TX, 1, 0, 1)\n"
    "KC_KERNEL KC_TEXEL_READS(TX == 1) KC_WORKGROUP(64, 1, 1) KC_GRID(kc_cdiv(n, 64), 1, 1)\n"
    "void texel(int n, const float4 *a, float4 *b) { int i = kc_global_id(0); if (i < n) b[i] = a[i]; }\n",
    /* KC_SPECIALIZE over int, uint and bool, among the other attributes */
    "KC_KERNEL KC_SPECIALIZE(op, u, b) KC_WORKGROUP(64, 1, 1) KC_GRID(kc_cdiv(n, 64), 1, 1)\n"
    "void spec(int n, int op, uint u, bool b, float *y) { int i = kc_global_id(0); if (i < n && b) y[i] = (float)(op + (int)u); }\n",
    /* 64-bit integers and unsigned spellings */
    K "void wide(long *a, ulong *b, unsigned int *c, unsigned long *d) {\n"
      "  a[0] = a[1] * 3000000000l; b[0] = 0xffffffffffull; c[0] = 0xffffffffu; d[0] = b[1] >> 3;\n"
      "}",
};

static void accepted_features(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < KC_COUNT(features); i++) {
        bool ok;
        char *text = diagnose(features[i], &ok);
        if (!ok || strstr(text, "warning")) {
            fprintf(stderr, "feature program %zu was not accepted cleanly:\n%s\n--- source\n%s\n", i, text,
                    features[i]);
            bad++;
        }
        free(text);
    }
    assert_int_equal(0, bad);
}

/* ---- diagnostics ---------------------------------------------------------------- */

static void diagnostic_format(void **state)
{
    (void)state;
    bool ok;
    char *text = diagnose(K "void k(float *x) {\n\tint i = x[0];\n}", &ok);
    assert_false(ok);
    assert_string_equal("t.kc:3:10: error: converting 'float' to 'int' in the initialisation of 'i' can lose information\n"
                        "    3 | \tint i = x[0];\n"
                        "      | \t        ^\n"
                        "  fix: write the conversion out: (int)(…)\n",
                        text);
    free(text);
}

static void reports_every_error(void **state)
{
    (void)state;
    bool ok;
    char *text = diagnose(K "void k(float *x) {\n"
                            "  int a = x[0];\n"     /* 3: lossy */
                            "  x[1] = b;\n"         /* 4: undeclared */
                            "  goto out;\n"         /* 5: goto */
                            "  x[2] = 1.0f\n"       /* 6: missing ; (reported at the end of line 6) */
                            "  x[3] = sinf();\n"    /* 7: arity */
                            "}\n"
                            "int g;\n",             /* 9: global */
                          &ok);
    assert_false(ok);
    const char *want[] = {"t.kc:3:", "t.kc:4:", "t.kc:5:", "t.kc:6:", "t.kc:7:", "t.kc:9:"};
    for (size_t i = 0; i < KC_COUNT(want); i++)
        ASSERT_CONTAINS(text, want[i]);
    int n = 0;
    for (const char *p = text; (p = strstr(p, ": error: ")); p++)
        n++;
    assert_int_equal(6, n);
    free(text);
}

static void limits_do_not_crash(void **state)
{
    (void)state;
    /* deep nesting of every kind is an error, never a stack overflow */
    const char *open[] = {"(", "{", "-", "a=", "if (1) ", "c ? 1 : "};
    const char *close[] = {")", "}", "", "", "", ""};
    for (size_t k = 0; k < KC_COUNT(open); k++) {
        kc_buf b = {0};
        kc_buf_puts(&b, K "void k(float *y) { int a, c; y[0] = (float)(");
        if (k == 1 || k == 4)
            kc_buf_puts(&b, "0); ");
        for (int i = 0; i < 20000; i++)
            kc_buf_puts(&b, open[k]);
        kc_buf_puts(&b, "1");
        for (int i = 0; i < 20000; i++)
            kc_buf_puts(&b, close[k]);
        kc_buf_puts(&b, k == 1 || k == 4 ? "; }" : "); }");
        bool ok;
        char *text = diagnose(b.data, &ok);
        assert_false(ok);
        ASSERT_CONTAINS(text, "deeper than");
        free(text);
        kc_buf_free(&b);
    }
}

/* Inputs that once blew up in time or memory: each now an error or a
 * plain success. */
static void runaway_inputs_are_bounded(void **state)
{
    (void)state;
    kc_buf b = {0};
    bool ok;
    /* #define M0 M1 M1 … doubles 40 times */
    for (int i = 0; i < 40; i++)
        kc_buf_printf(&b, "#define M%d M%d M%d\n", i, i + 1, i + 1);
    kc_buf_puts(&b, "#define M40 1\n" K "void k(int *y) { y[0] = M0; }\n");
    char *text = diagnose(b.data, &ok);
    assert_false(ok);
    ASSERT_CONTAINS(text, "expands to more than");
    free(text);
    kc_buf_free(&b);
    /* a switch with 20,000 cases compiles (it once took memory squared) */
    kc_buf_puts(&b, K "void k(int *y) { switch (y[0]) {");
    for (int i = 0; i < 20000; i++)
        kc_buf_printf(&b, " case %d: y[1] = %d; break;", i, i);
    kc_buf_puts(&b, " } }");
    text = diagnose(b.data, &ok);
    assert_true(ok);
    free(text);
    kc_buf_free(&b);
    /* a search space too large to list */
    for (int t = 0; t < 9; t++)
        kc_buf_printf(&b, "KC_TUNE(T%d, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)\n", t);
    kc_buf_puts(&b, K "void k(int *y) { y[0] = T0 + T1 + T2 + T3 + T4 + T5 + T6 + T7 + T8; }");
    text = diagnose(b.data, &ok);
    assert_false(ok);
    ASSERT_CONTAINS(text, "search space of 1000000000 variants");
    free(text);
    kc_buf_free(&b);
    /* a tunable with too many values */
    kc_buf_puts(&b, "KC_TUNE(T, 0");
    for (int i = 0; i < 5000; i++)
        kc_buf_printf(&b, ", %d", i);
    kc_buf_puts(&b, ")\n" K "void k(int *y) { y[0] = T; }");
    text = diagnose(b.data, &ok);
    assert_false(ok);
    ASSERT_CONTAINS(text, "5000 values; the limit is 4096");
    free(text);
    kc_buf_free(&b);
}

/* ---- what a package may read (DESIGN.md §11) --------------------------------------- */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Parses dir/name with the include folders given; returns the diagnostics
 * (owned by the caller) and whether it parsed. */
static char *parse_in(const char *dir, const char *name, const char *allow, bool *ok)
{
    kc_ctx c;
    kc_ctx_init(&c, NULL);
    if (allow)
        assert_true(kc_ctx_allow_dir(&c, allow));
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    *ok = kc_dsl_parse(&c, path) != NULL;
    char *text = kc_buf_take(&c.diag.text);
    kc_ctx_free(&c);
    return text ? text : strdup("");
}

/* #include reads regular files under the kernel's folder (and -I ones)
 * only, and nothing of a refused file reaches a diagnostic: the secret
 * below sits in the environment, in a file outside and behind a link. */
static void includes_stay_in_the_package(void **state)
{
    (void)state;
    char root[] = "/tmp/kc-test-includes-XXXXXX";
    assert_non_null(mkdtemp(root));
    char pkg[128], out[128], path[512];
    snprintf(pkg, sizeof(pkg), "%s/pkg", root);
    snprintf(out, sizeof(out), "%s/outside", root);
    assert_int_equal(0, mkdir(pkg, 0700));
    assert_int_equal(0, mkdir(out, 0700));
    snprintf(path, sizeof(path), "%s/secret.kch", out);
    write_text(path, "static float two(void) { return 2.0f; } /* SECRET-7f3a */ oops oops\n");
    char link[512];
    snprintf(link, sizeof(link), "%s/link.kch", pkg);
    assert_int_equal(0, symlink(path, link));
    snprintf(path, sizeof(path), "%s/fifo.kch", pkg);
    assert_int_equal(0, mkfifo(path, 0600));
    setenv("KC_TEST_SECRET", "SECRET-7f3a", 1);
    static const struct {
        const char *include, *message;
    } refused[] = {
        {"/proc/self/environ", "outside the package's folder"},
        {"/dev/zero", "outside the package's folder"},
        {"/dev/stdin", "outside the package's folder"},
        {"../outside/secret.kch", "outside the package's folder"},
        {"link.kch", "outside the package's folder"},
        {"fifo.kch", "not a regular file"},
        {"missing.kch", "cannot open included file"},
    };
    for (size_t i = 0; i < KC_COUNT(refused); i++) {
        char src[300];
        snprintf(src, sizeof(src), "#include <kc.h>\n#include \"%s\"\n" K "void k(float *y) { y[0] = 1.0f; }\n",
                 refused[i].include);
        snprintf(path, sizeof(path), "%s/a.kc", pkg);
        write_text(path, src);
        bool ok;
        char *text = parse_in(pkg, "a.kc", NULL, &ok);
        assert_false(ok);
        ASSERT_CONTAINS(text, "a.kc:2:10: error:");
        ASSERT_CONTAINS(text, refused[i].message);
        assert_null(strstr(text, "SECRET"));
        free(text);
    }
    /* -I lets the outside folder in; the link then resolves into it */
    write_text(path, "#include <kc.h>\n#include \"link.kch\"\n" K "void k(float *y) { y[0] = two(); }\n");
    bool ok;
    char *text = parse_in(pkg, "a.kc", out, &ok);
    assert_false(ok); /* the file is read now, and its own error is reported */
    ASSERT_CONTAINS(text, "link.kch:1:59: error:");
    free(text);
    snprintf(path, sizeof(path), "%s/secret.kch", out);
    write_text(path, "static float two(void) { return 2.0f; }\n");
    text = parse_in(pkg, "a.kc", out, &ok);
    assert_true(ok);
    free(text);
    unsetenv("KC_TEST_SECRET");
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(0, system(cmd));
}

/* ---- the corpus ----------------------------------------------------------------- */

static bool has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static bool icontains(const char *hay, const char *needle, size_t hay_len)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= hay_len; i++) {
        size_t k = 0;
        while (k < n && tolower((unsigned char)hay[i + k]) == tolower((unsigned char)needle[k]))
            k++;
        if (k == n)
            return true;
    }
    return false;
}

/* One annotation: "// expect-error: A|B", "// expect-error(G): A",
 * "// expect-compile-error: A" (see tests/dsl/corpus/README.md). */
typedef struct expectation {
    const char *file;
    int line;
    char group[32];
    char alts[256]; /* '|'-separated, lower case */
    bool met;
} expectation;

typedef struct diag_line {
    char file[1024];
    int line;
    const char *text; /* the message line */
    size_t len;
} diag_line;

static bool matches_any(const char *text, size_t len, const char *alts)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", alts);
    char *save = NULL;
    for (char *a = strtok_r(buf, "|", &save); a; a = strtok_r(NULL, "|", &save)) {
        while (*a == ' ')
            a++;
        size_t n = strlen(a);
        while (n && a[n - 1] == ' ')
            a[--n] = 0;
        if (n && icontains(text, a, len))
            return true;
    }
    return false;
}

/* Collects the annotations of one source text. */
static int scan_annotations(const char *path, const char *src, expectation *out, int max)
{
    int n = 0, line = 1;
    for (const char *s = src; s && *s; line++) {
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        const char *m = memmem(s, len, "expect-", 7);
        if (m && n < max && (!strncmp(m, "expect-error", 12) || !strncmp(m, "expect-compile-error", 20))) {
            expectation *x = &out[n++];
            memset(x, 0, sizeof(*x));
            x->file = path;
            x->line = line;
            const char *p = m + (m[7] == 'e' ? 12 : 20);
            if (*p == '(') {
                const char *close = memchr(p, ')', (size_t)(s + len - p));
                snprintf(x->group, sizeof(x->group), "%.*s", close ? (int)(close - p - 1) : 0, p + 1);
                p = close ? close + 1 : p;
            }
            if (*p == ':')
                p++;
            size_t k = 0;
            while (p < s + len && *p != '*' && k + 1 < sizeof(x->alts))
                x->alts[k++] = *p++;
            while (k && (x->alts[k - 1] == ' ' || x->alts[k - 1] == '/'))
                k--;
            x->alts[k] = 0;
        }
        s = eol ? eol + 1 : NULL;
    }
    return n;
}

/* Splits "file:line:col: error: msg" lines out of the diagnostics. */
static int error_lines(const char *diag, diag_line *out, int max)
{
    int n = 0;
    for (const char *s = diag; s && *s && n < max;) {
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        const char *e = memmem(s, len, ": error: ", 9);
        if (e) {
            const char *c1 = memchr(s, ':', len);
            if (c1 && c1 < e) {
                diag_line *d = &out[n];
                snprintf(d->file, sizeof(d->file), "%.*s", (int)(c1 - s), s);
                d->line = atoi(c1 + 1);
                d->text = e;
                d->len = len - (size_t)(e - s);
                n++;
            }
        }
        s = eol ? eol + 1 : NULL;
    }
    return n;
}

/* Checks one bad file: every annotation (or its group) has a matching
 * error on its line, and no error lands on a line without one. */
static int check_bad_file(const char *path)
{
    kc_ctx c;
    kc_ctx_init(&c, NULL);
    kc_program *p = kc_dsl_parse(&c, path);
    for (int i = 0; p && i < p->funcs.len; i++) {
        const kc_func *f = p->funcs.items[i];
        if (f->is_kernel) {
            kc_ir_binding b = kc_ir_default_binding(&c.arena, p, f);
            kc_ir_compile(&c.arena, &c.diag, p, f, &b, NULL);
        }
    }
    const char *diag = c.diag.text.data ? c.diag.text.data : "";
    static expectation ex[512];
    static diag_line dl[512];
    int nex = 0;
    for (int f = 0; f < c.src.nfiles; f++) /* the file and the local headers it includes */
        if (!c.src.files[f]->builtin)
            nex += scan_annotations(c.src.files[f]->path, c.src.files[f]->text, ex + nex, 512 - nex);
    int ndl = error_lines(diag, dl, 512), failures = 0;
    for (int i = 0; i < nex; i++)
        for (int k = 0; k < ndl; k++)
            if (dl[k].line == ex[i].line && strcmp(dl[k].file, ex[i].file) == 0 &&
                matches_any(dl[k].text, dl[k].len, ex[i].alts))
                ex[i].met = true;
    for (int i = 0; i < nex; i++) { /* a group is met when any of its lines is */
        bool met = ex[i].met;
        for (int k = 0; !met && ex[i].group[0] && k < nex; k++)
            met = ex[k].met && strcmp(ex[k].group, ex[i].group) == 0;
        if (!met) {
            fprintf(stderr, "%s:%d: expected an error mentioning '%s'\n", ex[i].file, ex[i].line, ex[i].alts);
            failures++;
        }
    }
    for (int k = 0; k < ndl; k++) {
        bool annotated = false;
        for (int i = 0; i < nex && !annotated; i++)
            annotated = dl[k].line == ex[i].line && strcmp(dl[k].file, ex[i].file) == 0;
        if (!annotated) {
            fprintf(stderr, "%s:%d: unexpected error: %.*s\n", dl[k].file, dl[k].line, (int)dl[k].len, dl[k].text);
            failures++;
        }
    }
    if (!nex) {
        fprintf(stderr, "%s: has no expect-error annotation\n", path);
        failures++;
    }
    if (failures)
        fprintf(stderr, "--- kc said:\n%s\n", diag);
    kc_ctx_free(&c);
    return failures;
}

/* "// expect-variants: KERNEL N" lines of an ok file. */
static int check_variant_counts(kc_ctx *c, const kc_program *p, const char *path)
{
    int bad = 0;
    const char *src = c->src.files[p->main_file]->text;
    for (const char *m = strstr(src, "expect-variants:"); m; m = strstr(m + 1, "expect-variants:")) {
        char name[128];
        long want;
        if (sscanf(m + 16, " %127s %ld", name, &want) != 2)
            continue;
        const kc_func *k = kc_program_func(p, name);
        long got = k ? kc_ir_each_variant(&c->arena, p, k, NULL, NULL) : -1;
        if (got != want) {
            fprintf(stderr, "%s: kernel %s has %ld variants, expected %ld\n", path, name, got, want);
            bad++;
        }
    }
    return bad;
}

static int check_ok_file(const char *path)
{
    kc_ctx c;
    kc_ctx_init(&c, stderr);
    kc_program *p = kc_dsl_parse(&c, path);
    int bad = p ? check_variant_counts(&c, p, path) : 1;
    for (int i = 0; p && i < p->funcs.len; i++) {
        const kc_func *f = p->funcs.items[i];
        if (!f->is_kernel)
            continue;
        kc_ir_binding b = kc_ir_default_binding(&c.arena, p, f);
        if (!kc_ir_compile(&c.arena, &c.diag, p, f, &b, NULL))
            bad++;
    }
    if (bad)
        fprintf(stderr, "%s: should be accepted\n", path);
    kc_ctx_free(&c);
    return bad;
}

static int each_kc(const char *dir, int (*fn)(const char *), int *count)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int bad = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!has_suffix(e->d_name, ".kc"))
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        bad += fn(path);
        (*count)++;
    }
    closedir(d);
    return bad;
}

static void corpus(void **state)
{
    (void)state;
    int n = 0, bad = 0;
    bad += each_kc(KC_SRC("tests/dsl/corpus/ok"), check_ok_file, &n);
    bad += each_kc(KC_SRC("kernels"), check_ok_file, &n);
    bad += each_kc(KC_SRC("tests/dsl/corpus/bad"), check_bad_file, &n);
    if (!n)
        skip();
    assert_int_equal(0, bad);
}

/* Kernel files read as plain C to clang with <kc.h> (editors, clangd). */
static int clang_accepts(const char *path)
{
    char cmd[8192];
    snprintf(cmd, sizeof(cmd), "clang-19 -fsyntax-only -x c -std=c11 -I %s %s 2>&1", KC_SRC("dsl/include"), path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 1;
    char out[4096];
    size_t n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = 0;
    int status = pclose(p);
    if (status != 0)
        fprintf(stderr, "clang rejects %s:\n%s\n", path, out);
    return status != 0;
}

static void clang_reads_kernels_as_c(void **state)
{
    (void)state;
    if (system("command -v clang-19 >/dev/null 2>&1") != 0)
        skip();
    int n = 0, bad = 0;
    bad += each_kc(KC_SRC("tests/dsl/corpus/ok"), clang_accepts, &n);
    bad += each_kc(KC_SRC("kernels"), clang_accepts, &n);
    bad += each_kc(KC_SRC("tests/ir/golden"), clang_accepts, &n);
    assert_true(n > 0);
    assert_int_equal(0, bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refused_constructs),  cmocka_unit_test(accepted_features),
        cmocka_unit_test(diagnostic_format),   cmocka_unit_test(reports_every_error),
        cmocka_unit_test(limits_do_not_crash), cmocka_unit_test(runaway_inputs_are_bounded),
        cmocka_unit_test(corpus),
        cmocka_unit_test(includes_stay_in_the_package),
        cmocka_unit_test(clang_reads_kernels_as_c),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
