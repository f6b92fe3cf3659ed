/* moe_freq.h: Megatron-LM's --moe-layer-freq (argparse dest moe_layer_freq)
 * as ulysim places MoE layers: the first dense layers, then every k-th layer
 * MoE (uly_model's moe_dense_first, moe_every). One reader for the command
 * line's flag (sim/driver/args_moe.c) and the argument block of a training
 * log (megatron_log.c), which prints the pattern evaluated ([0, 0, 1, 1]). */
#ifndef FORMATS_MOE_FREQ_H
#define FORMATS_MOE_FREQ_H

#include <stddef.h>
#include <stdint.h>

#define MOE_FREQ_MAX_ENTRIES 65536 /* a pattern's entries when the layers are not known yet */

/* v: an integer k (layer i MoE when i % k == 0: *dense_first 0, *every k,
 * *entries 0), or a pattern as Python evaluates it (lists of 0 and 1, +, *,
 * parentheses: "([0]*3+[1]*58)", "[0, 1, 0, 1]") that is the first dense
 * layers, then every k-th MoE: *dense_first, *every, *entries its length.
 * layers > 0: the pattern has one entry per layer; layers <= 0: any length
 * up to MOE_FREQ_MAX_ENTRIES (the caller checks it against the layers).
 * Returns 0, or 2 with why "NAME 'v': reason (valid: ...)", one line. */
int moe_freq_parse(const char *name, const char *v, int64_t layers, int64_t *dense_first, int64_t *every,
                   int64_t *entries, char *why, size_t n);

#endif
