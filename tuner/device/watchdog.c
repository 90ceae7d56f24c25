/*
 * watchdog.c — noticing a launch that never ends, or a compile that
 * takes minutes.
 *
 * A variant can loop forever (a tunable that breaks a loop's stride) or
 * run for minutes. The host cannot cancel a dispatch in flight: Vulkan,
 * HIP and CUDA have no call for it, and a driver that resets the GPU takes
 * the whole context with it. So a thread watches each launch; when one
 * runs past its deadline it records the variant as a timeout in the cache,
 * through its own connection, so that the next run skips it, and hands
 * over to the caller's on_hang, which ends the process (kc tune re-executes
 * itself and resumes from the cache).
 *
 * kc's own compile of a variant is watched the same way: LLVM cannot be
 * interrupted either, and one over-unrolled variant once took 6 min 25 s
 * for gfx1100. A compile past its limit is recorded as refused, with the
 * limit in its detail (measure.c reads it back), so that a later
 * run with a higher --compile-limit tries it again.
 */
#include "device_private.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The clock of the deadlines: monotonic where the condition variable can
 * wait on it; winpthreads' waits take the wall clock. */
#if defined(_WIN32)
#define DEADLINE_CLOCK CLOCK_REALTIME
#else
#define DEADLINE_CLOCK CLOCK_MONOTONIC
#endif

struct td_watchdog {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool armed, quit;
    td_watch what;
    struct timespec deadline;
    double seconds;
    kc_arena arena; /* the armed key's strings */
    kc_cache_key key;
    char *cache_path;
    void (*on_hang)(void *, const char *);
    void *user;
};

static void fire(td_watchdog *w)
{
    char err[512], msg[1024], detail[256];
    kc_cache *c = kc_cache_open(w->cache_path, err, sizeof(err));
    const char *variant = *w->key.variant ? w->key.variant : "(default)";
    kc_cache_result r = {.status = KC_RESULT_TIMEOUT, .detail = msg};
    if (w->what == TD_WATCH_COMPILE) {
        snprintf(detail, sizeof(detail), TD_COMPILE_WHY "%.1f s (--compile-limit raises it)", w->seconds);
        snprintf(msg, sizeof(msg), "variant %s of '%s': %s; refused", variant, w->key.kernel, detail);
        r = (kc_cache_result){.status = KC_RESULT_REFUSED, .detail = detail};
    } else {
        snprintf(msg, sizeof(msg), "variant %s of '%s' at %s ran past %.1f s and cannot be stopped from the host; "
                 "recorded as a timeout", variant, w->key.kernel, w->key.shape, w->seconds);
    }
    if (!c || !kc_cache_put(c, &w->key, &r, err, sizeof(err)))
        snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "; recording it failed: %s", err);
    kc_cache_close(c);
    w->on_hang(w->user, msg);
}

static void *watch(void *arg)
{
    td_watchdog *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->quit) {
        if (!w->armed) {
            pthread_cond_wait(&w->wake, &w->lock);
            continue;
        }
        struct timespec deadline = w->deadline;
        if (pthread_cond_timedwait(&w->wake, &w->lock, &deadline) == ETIMEDOUT && w->armed &&
            memcmp(&deadline, &w->deadline, sizeof(deadline)) == 0) {
            fire(w); /* does not return when on_hang ends the process */
            w->armed = false;
        }
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

td_watchdog *td_watchdog_start(const char *cache_path, void (*on_hang)(void *, const char *), void *user)
{
    if (!on_hang)
        return NULL; /* nobody to hand a hang to: no watching */
    td_watchdog *w = calloc(1, sizeof(*w));
    if (!w || !(w->cache_path = strdup(cache_path))) {
        free(w);
        return NULL;
    }
    w->on_hang = on_hang;
    w->user = user;
    kc_arena_init(&w->arena);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, DEADLINE_CLOCK);
    pthread_cond_init(&w->wake, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&w->lock, NULL);
    if (pthread_create(&w->thread, NULL, watch, w) != 0) {
        free(w->cache_path);
        free(w);
        return NULL;
    }
    return w;
}

void td_watchdog_stop(td_watchdog *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->quit = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    kc_arena_free(&w->arena);
    free(w->cache_path);
    free(w);
}

static const char *keep(kc_arena *a, const char *s)
{
    return kc_arena_strdup(a, s ? s : "");
}

void td_watchdog_arm(td_watchdog *w, const kc_cache_key *key, double seconds, td_watch what)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    kc_arena_free(&w->arena);
    kc_arena_init(&w->arena);
    w->key = (kc_cache_key){keep(&w->arena, key->kernel),     keep(&w->arena, key->source_hash),
                            keep(&w->arena, key->compiler),   keep(&w->arena, key->device_key),
                            keep(&w->arena, key->device),     keep(&w->arena, key->backend),
                            keep(&w->arena, key->shape),      keep(&w->arena, key->variant)};
    clock_gettime(DEADLINE_CLOCK, &w->deadline);
    double whole = (double)(time_t)seconds;
    w->deadline.tv_sec += (time_t)whole;
    w->deadline.tv_nsec += (long)((seconds - whole) * 1e9);
    if (w->deadline.tv_nsec >= 1000000000L) {
        w->deadline.tv_sec++;
        w->deadline.tv_nsec -= 1000000000L;
    }
    w->seconds = seconds;
    w->what = what;
    w->armed = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

void td_watchdog_disarm(td_watchdog *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->armed = false;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}
