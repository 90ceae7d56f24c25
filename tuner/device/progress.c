/*
 * progress.c — what a person watching a tune sees.
 *
 * On a terminal one line redraws itself (at most ten times a second):
 * which search of how many, evaluations done of planned, the best so far
 * and its variant, failures, and the time left. Off a terminal (CI logs, a
 * pipe) the same facts come as plain lines, one per tenth of a search or
 * every ten seconds, whichever is sooner, so a log neither floods nor goes
 * quiet. Lines that stay (notes, each search's summary) first clear the
 * live line.
 */
#include "device_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double td_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void td_progress_init(td_progress *p, FILE *out, bool quiet, long pairs, double deadline)
{
    memset(p, 0, sizeof(*p));
    p->out = out;
    p->quiet = quiet;
    p->tty = kc_is_terminal(out) && !getenv("KC_NO_TTY");
    p->t0 = td_now();
    p->pairs_total = pairs;
    p->deadline = deadline;
}

void td_progress_pair(td_progress *p, const char *kernel, const char *shape, long budget)
{
    p->pair_index++;
    p->kernel = kernel;
    p->shape = shape;
    p->budget = budget;
    p->last_draw = 0;
}

/* "1h02m", "3m05s", "42s". */
static void duration(char *buf, size_t len, double s)
{
    long t = (long)ceil(s);
    if (t >= 3600)
        snprintf(buf, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, len, "%lds", t);
}

void td_time_text(char *buf, size_t len, double ns)
{
    if (ns < 1e3)
        snprintf(buf, len, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, len, "%.3g us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, len, "%.3g ms", ns / 1e6);
    else
        snprintf(buf, len, "%.3g s", ns / 1e9);
}

/* Seconds left: this search's remaining evaluations and the searches after
 * it, at the pace so far; never past the deadline. -1 when unknown. */
static double left(const td_progress *p, long done)
{
    double est = -1;
    if (p->measured_all > 0 && p->budget > 0) {
        double per = p->measuring_seconds / (double)p->measured_all;
        est = per * ((double)(p->budget - done) + (double)(p->pairs_total - p->pair_index) * (double)p->budget);
    }
    if (p->deadline > 0) {
        double d = p->deadline - td_now();
        est = est < 0 || d < est ? fmax(d, 0) : est;
    }
    return est;
}

void td_progress_update(td_progress *p, long done, double best_ns, const char *best, long failures, bool measured,
                        double seconds)
{
    if (measured) {
        p->measured_all++;
        p->measuring_seconds += seconds;
    }
    double now = td_now();
    bool plain_due = done == p->budget || now - p->last_draw >= 10 ||
                     (p->budget >= 10 && done % (p->budget / 10) == 0);
    if (p->quiet || (p->tty ? now - p->last_draw < 0.1 && done != p->budget : !plain_due))
        return;
    p->last_draw = now;
    char bt[32] = "-", eta[32] = "?";
    if (best)
        td_time_text(bt, sizeof(bt), best_ns);
    double l = left(p, done);
    if (l >= 0)
        duration(eta, sizeof(eta), l);
    char count[48];
    if (p->budget > 0)
        snprintf(count, sizeof(count), "%ld/%ld", done, p->budget);
    else
        snprintf(count, sizeof(count), "%ld done", done);
    fprintf(p->out, "%s[%ld/%ld] %s %s  %s  best %s%s%s%s  %ld failed  %s left%s", p->tty ? "\r" : "",
            p->pair_index, p->pairs_total, p->kernel, p->shape, count, bt, best ? " (" : "",
            best ? (*best ? best : "default") : "", best ? ")" : "", failures, eta, p->tty ? "\033[K" : "\n");
    p->line_open = p->tty;
    fflush(p->out);
}

void td_progress_end_line(td_progress *p)
{
    if (p->line_open)
        fputs("\r\033[K", p->out);
    p->line_open = false;
}

void td_progress_say(td_progress *p, const char *fmt, ...)
{
    td_progress_end_line(p);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->out, fmt, ap);
    va_end(ap);
    fputc('\n', p->out);
    fflush(p->out);
}
