/* time() for htsim: the value of $HTSIM_TIME (default 1) instead of the wall clock.
 *
 * csg-htsim's RoCE source seeds the C random generator from time(NULL) when each flow is created
 * (sim/roce.cpp: srand(time(NULL)); _pathid = random() % 256), so two runs of the same command
 * draw different ECMP paths unless they start in the same second. bench/sim_bench.py --htsim
 * builds this file into a temporary shared library and runs htsim with LD_PRELOAD pointing at it:
 * every run then makes the same draws (its -seed fixes the switches' hash salts). */
#include <stdlib.h>
#include <time.h>

time_t time(time_t *out) {
    const char *v = getenv("HTSIM_TIME");
    time_t t = v ? (time_t)strtoll(v, NULL, 10) : 1;
    if (out) *out = t;
    return t;
}
