/*
 * kit-unit - exposes the kit's host-side functions to the CPU tests
 * (tests/00-kit.bats), one call per command line. Needs no GPU.
 *
 *   kit-unit parse-size TEXT              the size, or exit 64 with the reason
 *   kit-unit np N                         NP and the largest index r / NP gives
 *   kit-unit default-size L2 FREE BPE ABPE  the default problem size
 *   kit-unit expected-distinct UNITS      expected distinct units among 32 lanes
 *   kit-unit grouped V                    V with thousands separators
 *   kit-unit median V...                  the median of the values
 */
#include "kit_args.h"
#include "kit_counted.h"
#include "kit_device.h"
#include "kit_report.h"
#include "kit_rng.h"
#include "kit_timing.h"

static unsigned long long arg_u64(const char *s)
{
    unsigned long long v;
    if (kit_parse_u64(s, &v) != 0)
        kit_die(KIT_EXIT_USAGE, "'%s' is not an unsigned integer", s);
    return v;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    kit_program = "kit-unit";

    if (strcmp(cmd, "parse-size") == 0 && argc == 3) {
        unsigned long long v;
        char why[64];
        if (kit_parse_size(argv[2], &v, why, sizeof why) != 0)
            kit_die(KIT_EXIT_USAGE, "'%s' %s", argv[2], why);
        printf("%llu\n", v);
    } else if (strcmp(cmd, "np") == 0 && argc == 3) {
        unsigned long long n = arg_u64(argv[2]);
        unsigned int np;
        if (n < 2 || n > 0xffffffffull)
            kit_die(KIT_EXIT_USAGE, "n must be from 2 to 2^32 - 1");
        np = kit_np(n);
        printf("np: %u\nmax-index: %u\nmin-index: %u\n", np, kit_map_to_range(0xffffffffu, np),
               kit_map_to_range(0u, np));
    } else if (strcmp(cmd, "default-size") == 0 && argc == 6) {
        printf("%llu\n", kit_default_size((long long)arg_u64(argv[2]), (long long)arg_u64(argv[3]),
                                          (unsigned)arg_u64(argv[4]), (unsigned)arg_u64(argv[5])));
    } else if (strcmp(cmd, "expected-distinct") == 0 && argc == 3) {
        printf("%.4f\n", kit_expected_distinct(atof(argv[2])));
    } else if (strcmp(cmd, "grouped") == 0 && argc == 3) {
        printf("%s\n", kit_grouped(arg_u64(argv[2])));
    } else if (strcmp(cmd, "median") == 0 && argc >= 3) {
        float v[64];
        int n = argc - 2 < 64 ? argc - 2 : 64;
        for (int i = 0; i < n; i++)
            v[i] = (float)atof(argv[i + 2]);
        printf("%g\n", kit_median(v, n));
    } else {
        kit_die(KIT_EXIT_USAGE, "usage: kit-unit parse-size|np|default-size|expected-distinct|"
                                "grouped|median ARGS (see the source)");
    }
    return 0;
}
