/*
 * kit-query - what this GPU offers, in the terms the course uses.
 *
 *   kit-query           a property table (the course's K40 table, for your
 *                       GPU) followed by key: value lines, the last one
 *                       how many GPUs the kit sees (gpus-visible)
 *   kit-query --check   one line naming the GPU; exit 2, with the reason,
 *                       when the kit cannot run here (the tests use this to
 *                       decide whether to skip)
 */
#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_counted.h"
#include "kit_report.h"

int main(int argc, char **argv)
{
    kit_device d;
    int check = 0, device = 0, count = 0;
    kit_option opts[] = {
        {"--check", KIT_OPT_FLAG, &check, NULL, "only say whether the kit can run here", 0, 0, NULL},
        {"--device", KIT_OPT_INT, &device, "D", "which GPU to describe", 0, 63, NULL},
    };

    kit_parse_args(argc, argv, "Describes the GPU the labs will run on.", opts, KIT_COUNT(opts));
    kit_device_open(device, &d);
    if (check) {
        printf("GPU %d: %s (compute capability %d.%d)\n", d.ordinal, d.name, d.cc_major, d.cc_minor);
        return KIT_EXIT_PASS;
    }
    printf("%-28s %s\n", "GPU", d.name);
    printf("%-28s %d.%d\n", "compute capability", d.cc_major, d.cc_minor);
    printf("%-28s %d\n", "SMs", d.sms);
    printf("%-28s %.1f GiB\n", "global memory", d.global_bytes / 1073741824.0);
    printf("%-28s %.1f MiB\n", "L2 cache", d.l2_bytes / 1048576.0);
    printf("%-28s %d\n", "warp size", d.warp_size);
    printf("%-28s %d (%d warps)\n", "max threads per SM", d.max_threads_per_sm, d.max_warps_per_sm);
    printf("%-28s %d\n", "max threads per block", d.max_threads_per_block);
    printf("%-28s %d\n", "max blocks per SM", d.max_blocks_per_sm);
    printf("%-28s %d\n", "registers per SM", d.regs_per_sm);
    printf("%-28s %d\n", "registers per block", d.regs_per_block);
    printf("%-28s %lld KiB\n", "shared memory per SM", d.smem_per_sm / 1024);
    printf("%-28s %lld KiB (%lld KiB opt-in)\n", "shared memory per block", d.smem_per_block / 1024,
           d.smem_per_block_optin / 1024);
    printf("%-28s %d\n", "copy engines", d.copy_engines);
    printf("%-28s %d (128-byte segments, 32-byte sectors)\n", "segment size", KIT_SEGMENT_BYTES);
    printf("\n");
    kit_kv_device(&d);
    kit_kv("free-memory-bytes", "%lld", d.free_bytes);
    KIT_CHECK(cudaGetDeviceCount(&count));
    kit_kv("gpus-visible", "%d", count);
    {
        /* The GPU's identity as nvidia-smi writes it: the grader's GPU lock. */
        struct cudaDeviceProp prop;
        const unsigned char *u;
        char uuid[64];
        int n = 0;
        KIT_CHECK(cudaGetDeviceProperties(&prop, d.ordinal));
        u = (const unsigned char *)prop.uuid.bytes;
        n += snprintf(uuid + n, sizeof uuid - n, "GPU-");
        for (int i = 0; i < 16; i++)
            n += snprintf(uuid + n, sizeof uuid - n, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", u[i]);
        kit_kv("uuid", "%s", uuid);
    }
    return KIT_EXIT_PASS;
}
