/*
 * cmd_tune.h — `kc tune`'s two modes share their options: on a device
 * (cmd_tune.c) and replaying a recorded space (cmd_tune_replay.c).
 */
#ifndef KC_CMD_TUNE_H
#define KC_CMD_TUNE_H

#include "kc_tools.h"
#include "kc_tune.h"
#include "kc_tune_device.h"

enum { TUNE_MAX_LIST = 256 };

typedef struct tune_args {
    /* both modes */
    const char *strategy;
    long budget; /* replay: 0 = from the fraction; device: 0 = the default */
    long seed;
    bool has_budget, list;
    /* replay */
    const char *replay;
    double fraction;
    long repeat;
    bool has_fraction, json;
    /* on a device */
    kc_tune_device_options dev;
    const char *kernels[TUNE_MAX_LIST], *shapes[TUNE_MAX_LIST];
} tune_args;

int kc_tune_replay_main(tune_args *t);
void kc_tune_list_strategies(void);

#endif
