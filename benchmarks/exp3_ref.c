/* A compiled reference loop for benchmarks/throughput.py: EXP3 with mixing
 * (Asi, Raman & Talwar, Alg 3) over K = 2 arms, every loss 1, on one core.
 * Weights are kept as log-weights, as in the numpy implementation.
 *
 *   gcc -O2 -o /tmp/exp3_ref benchmarks/exp3_ref.c -lm && /tmp/exp3_ref 20000 1000
 *
 * prints the run-rounds simulated per second. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t state = 0x9E3779B97F4A7C15ull;

/* splitmix64: small, fast, good enough for a throughput reference */
static inline uint64_t next_u64(void) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static inline double uniform01(void) { return (double)(next_u64() >> 11) * 0x1.0p-53; }

int main(int argc, char **argv) {
  const long runs = argc > 1 ? atol(argv[1]) : 100000;
  const long horizon = argc > 2 ? atol(argv[2]) : 1000;
  const double eta = 0.01, gamma = 0.01;
  long second = 0; /* keeps the loop from being optimised away */
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long r = 0; r < runs; r++) {
    double logw0 = 0.0, logw1 = 0.0;
    for (long t = 0; t < horizon; t++) {
      const double top = logw0 > logw1 ? logw0 : logw1;
      const double w0 = exp(logw0 - top), w1 = exp(logw1 - top);
      const double p0 = (1.0 - gamma) * w0 / (w0 + w1) + gamma / 2.0;
      if (uniform01() < p0) {
        logw0 -= eta / p0;                /* loss 1, importance-weighted */
      } else {
        logw1 -= eta / (1.0 - p0);
        second++;
      }
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &stop);
  const double seconds = (double)(stop.tv_sec - start.tv_sec) + 1e-9 * (double)(stop.tv_nsec - start.tv_nsec);
  printf("%.0f\n", (double)runs * (double)horizon / seconds);
  return second < 0;
}
