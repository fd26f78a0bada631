/*
 * pifarm's memory bandwidth probe: write then read a large buffer, a few passes, and time
 * each pass with the monotonic clock.
 *
 * Usage: membw BYTES PASSES REQUIRE_MLOCK(0|1) [MIN_SECONDS]. The buffer is locked in RAM (mlock) so no
 * pass measures page faults or swap. Where mlock is refused (RLIMIT_MEMLOCK as non-root),
 * the probe goes on with the pages touched once beforehand, or exits with status 3 when
 * REQUIRE_MLOCK is 1. After PASSES passes it goes on passing until MIN_SECONDS have passed
 * since the first began (0 or none: no more), so a small buffer still makes a long trial.
 * Prints one line:
 *   bytes=B passes=P write_ns=W read_ns=R best_write_ns=BW best_read_ns=BR mlock=ok|E sum=S
 * where W and R are totals over the passes and E is the refusal (e.g. refused:ENOMEM).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* each pass writes a different value, so no pass is a repeat the compiler could drop */
__attribute__((noinline)) static void write_pass(uint64_t *words, size_t count, uint64_t value)
{
    for (size_t i = 0; i < count; i++)
        words[i] = value + i;
}

__attribute__((noinline)) static uint64_t read_pass(const uint64_t *words, size_t count)
{
    uint64_t total = 0;
    for (size_t i = 0; i < count; i++)
        total += words[i];
    return total;
}

static const char *lock_buffer(void *buffer, size_t bytes)
{
    static char refusal[64];
    if (mlock(buffer, bytes) == 0)
        return "ok";
    snprintf(refusal, sizeof refusal, "refused:%s", errno == ENOMEM ? "ENOMEM"
             : errno == EPERM ? "EPERM" : errno == EAGAIN ? "EAGAIN" : "other");
    return refusal;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: membw BYTES PASSES REQUIRE_MLOCK [MIN_SECONDS]\n");
        return 2;
    }
    size_t bytes = (size_t)strtoull(argv[1], NULL, 10);
    unsigned passes = (unsigned)strtoul(argv[2], NULL, 10);
    uint64_t min_ns = argc == 5 ? (uint64_t)strtoull(argv[4], NULL, 10) * 1000000000u : 0;
    size_t count = bytes / sizeof(uint64_t);
    uint64_t *words = malloc(count * sizeof(uint64_t));
    if (words == NULL || count == 0 || passes == 0) {
        fprintf(stderr, "membw: cannot allocate %zu bytes (or nothing to do)\n", bytes);
        return 2;
    }
    const char *locked = lock_buffer(words, count * sizeof(uint64_t));
    if (strcmp(locked, "ok") != 0 && strcmp(argv[3], "1") == 0) {
        fprintf(stderr, "membw: mlock of %zu bytes was %s (raise RLIMIT_MEMLOCK or run as "
                        "root)\n", bytes, locked);
        return 3;
    }
    memset(words, 0, count * sizeof(uint64_t)); /* fault every page in before timing */
    uint64_t write_ns = 0, read_ns = 0, best_write = UINT64_MAX, best_read = UINT64_MAX, total = 0;
    unsigned pass = 0;
    for (uint64_t began = now_ns(); pass < passes || now_ns() - began < min_ns; pass++) {
        uint64_t start = now_ns();
        write_pass(words, count, pass + 1u);
        uint64_t middle = now_ns();
        total += read_pass(words, count);
        uint64_t end = now_ns();
        write_ns += middle - start;
        read_ns += end - middle;
        best_write = middle - start < best_write ? middle - start : best_write;
        best_read = end - middle < best_read ? end - middle : best_read;
    }
    sink = total;
    printf("bytes=%zu passes=%u write_ns=%llu read_ns=%llu best_write_ns=%llu best_read_ns=%llu "
           "mlock=%s sum=%016llx\n", count * sizeof(uint64_t), pass,
           (unsigned long long)write_ns, (unsigned long long)read_ns,
           (unsigned long long)best_write, (unsigned long long)best_read, locked,
           (unsigned long long)sink);
    return 0;
}
