/* A header with an error in it: the error must be reported against this
 * file and this line, not against the kernel file that includes it. */
#pragma once

static int quantise(float v)
{
    return v * 127.0f;                         // expect-error: cast|lose
}
