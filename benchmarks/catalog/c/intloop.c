/*
 * pifarm's integer benchmark, in the spirit of Dhrystone: string copies and compares, array
 * indexing, records passed by pointer, branches and calls, with no floating point.
 *
 * Usage: intloop SECONDS. Runs rounds of the same deterministic work until SECONDS of
 * monotonic time have passed, then prints one line:
 *   iterations=N ns=T checksum=C
 * Every round depends on the state the previous one left (so no round can be skipped or
 * hoisted), and the state ends in a volatile sink (so none of it is dead code).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS_PER_CLOCK_CHECK 4096u
#define ARRAY_LENGTH 64u

struct record {
    uint32_t number;
    uint32_t kind;
    char text[32];
};

static volatile uint32_t sink;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* noinline: a real call, as Dhrystone's procedures are, not folded into the loop */
__attribute__((noinline)) static uint32_t mix_record(struct record *record, uint32_t seed)
{
    record->number = record->number * 1103515245u + seed + 12345u;
    record->kind = (record->number >> 16) % 5u;
    switch (record->kind) {
    case 0: return record->number ^ 0x9e3779b9u;
    case 1: return record->number + (seed << 3);
    case 2: return record->number - (seed >> 2);
    case 3: return record->number | (seed & 0xffu);
    default: return record->number & ~seed;
    }
}

__attribute__((noinline)) static uint32_t walk_array(uint32_t *array, uint32_t start)
{
    uint32_t index = start % ARRAY_LENGTH, total = 0;
    for (unsigned step = 0; step < 16u; step++) {
        array[index] += total + step;
        total += array[index] >> 1;
        index = (index + (array[index] & 7u) + 1u) % ARRAY_LENGTH;
    }
    return total;
}

__attribute__((noinline)) static uint32_t copy_and_compare(struct record *a, struct record *b,
                                                           uint32_t state)
{
    /* the texts differ by one letter chosen by the state, so strcmp's result is not known */
    strcpy(b->text, a->text);
    b->text[state % 26u] = (char)('A' + (state >> 8) % 26u);
    return (uint32_t)(strcmp(a->text, b->text) + 2);
}

static uint32_t one_round(struct record *a, struct record *b, uint32_t *array, uint32_t state)
{
    state = mix_record(a, state);
    state += walk_array(array, state);
    state ^= copy_and_compare(a, b, state);
    state = mix_record(b, state);
    return state;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: intloop SECONDS\n");
        return 2;
    }
    uint64_t limit_ns = strtoull(argv[1], NULL, 10) * 1000000000u;
    struct record a = {1, 0, "PIFARM INTEGER BENCHMARK, 1ST"}, b = {2, 0, ""};
    uint32_t array[ARRAY_LENGTH];
    for (unsigned i = 0; i < ARRAY_LENGTH; i++)
        array[i] = i * 2654435761u;
    uint32_t state = 1;
    uint64_t iterations = 0, start = now_ns(), elapsed = 0;
    while (elapsed < limit_ns) {
        for (unsigned i = 0; i < ROUNDS_PER_CLOCK_CHECK; i++)
            state = one_round(&a, &b, array, state);
        iterations += ROUNDS_PER_CLOCK_CHECK;
        elapsed = now_ns() - start;
    }
    sink = state;
    printf("iterations=%llu ns=%llu checksum=%08x\n", (unsigned long long)iterations,
           (unsigned long long)elapsed, (unsigned)sink);
    return 0;
}
