/*
 * kit-query - what this GPU offers, in the terms the course uses.
 *
 *   kit-query           a property table (the course's K40 table, for your
 *                       GPU) followed by key: value lines: how many GPUs
 *                       the kit sees (gpus-visible), the GPU's uuid, the
 *                       platform (platform, platform-kernel, ipc)
 *   kit-query --check   one line naming the GPU; exit 2, with the reason,
 *                       when the kit cannot run here (the tests use this to
 *                       decide whether to skip)
 *   kit-query --platform
 *                       where the kit runs (a Linux host, WSL 2, WSL 1),
 *                       from the kernel's release and the WSL driver's
 *                       library, without touching the GPU: key: value lines
 *                       (platform, platform-kernel, platform-gpu-driver, ipc,
 *                       platform-problem), exit 0 (kit_platform.h)
 */
#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_counted.h"
#include "kit_report.h"

/* GPU ORDINAL's uuid, as nvidia-smi writes it (GPU-xxxxxxxx-xxxx-...). */
static void kit_uuid(int ordinal, char *out, size_t size)
{
    struct cudaDeviceProp prop;
    const unsigned char *u;
    int n;
    KIT_CHECK(cudaGetDeviceProperties(&prop, ordinal));
    u = (const unsigned char *)prop.uuid.bytes;
    n = snprintf(out, size, "GPU-");
    for (int i = 0; i < 16 && n > 0 && (size_t)n < size; i++)
        n += snprintf(out + n, size - (size_t)n, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", u[i]);
}

/* Whether two processes can share GPU memory here, and what is wrong with
 * the set-up, if anything. */
static void platform_ipc_kv(const kit_platform *p)
{
    char problem[640];
    const char *why;
    if (kit_platform_ipc(p, &why))
        kit_kv("ipc", "yes");
    else
        kit_kv("ipc", "no (%s)", why);
    if (kit_platform_problem(p, problem, sizeof problem))
        kit_kv("platform-problem", "%s", problem);
}

/* The platform's key: value lines (kit_platform.h); every value on one line. */
static void platform_kv(void)
{
    const kit_platform *p = kit_platform_get();
    char words[512];

    kit_kv("platform", "%s", kit_platform_name(p));
    kit_kv("platform-words", "%s", kit_platform_words(p, words, sizeof words));
    kit_kv("platform-kernel", "%s", p->release[0] ? p->release : "unknown");
    kit_kv("platform-kernel-from", "%s", p->release_from[0] ? p->release_from : "none");
    if (p->kind == KIT_PLATFORM_WSL2)
        kit_kv("platform-gpu-driver", "%s", p->wsl_libcuda[0] ? "windows" : "none");
    else
        kit_kv("platform-gpu-driver", "%s", p->kind == KIT_PLATFORM_WSL1 ? "none" : "linux");
    kit_kv("platform-wsl-libcuda", "%s", p->wsl_libcuda[0] ? p->wsl_libcuda : "none");
    kit_kv("platform-dxg", "%s", p->dxg ? "yes" : "no");
    platform_ipc_kv(p);
    if (p->root[0])
        kit_kv("platform-test-root", "%s", p->root);
}

int main(int argc, char **argv)
{
    kit_device d;
    int check = 0, device = 0, count = 0, platform = 0;
    char words[512];
    kit_option opts[] = {
        {"--check", KIT_OPT_FLAG, &check, NULL, "only say whether the kit can run here", 0, 0, NULL},
        {"--device", KIT_OPT_INT, &device, "D", "which GPU to describe", 0, 63, NULL},
        {"--platform", KIT_OPT_FLAG, &platform, NULL,
         "only say where the kit runs (Linux, WSL 2, WSL 1), without the GPU", 0, 0, NULL},
    };

    kit_parse_args(argc, argv, "Describes the GPU the labs will run on.", opts, KIT_COUNT(opts));
    if (platform) {
        platform_kv();
        return KIT_EXIT_PASS;
    }
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
    printf("%-28s %s\n", "platform", kit_platform_words(kit_platform_get(), words, sizeof words));
    printf("\n");
    kit_kv_device(&d);
    kit_kv("free-memory-bytes", "%lld", d.free_bytes);
    KIT_CHECK(cudaGetDeviceCount(&count));
    kit_kv("gpus-visible", "%d", count);
    {
        /* The GPUs' identities as nvidia-smi writes them: the grader's GPU
         * locks (this GPU's, and those of every GPU the kit sees, which a
         * program that sees them all holds). */
        char uuid[64], all[64 * 16] = "";
        size_t used = 0;
        kit_uuid(d.ordinal, uuid, sizeof uuid);
        kit_kv("uuid", "%s", uuid);
        for (int g = 0; g < count && used + sizeof uuid < sizeof all; g++) {
            kit_uuid(g, uuid, sizeof uuid);
            used += (size_t)snprintf(all + used, sizeof all - used, "%s%s", g ? " " : "", uuid);
        }
        kit_kv("uuids", "%s", all);
    }
    {
        /* The platform's other facts (kit_kv_device gave `platform:`). */
        const kit_platform *p = kit_platform_get();
        kit_kv("platform-kernel", "%s", p->release[0] ? p->release : "unknown");
        platform_ipc_kv(p);
    }
    return KIT_EXIT_PASS;
}
