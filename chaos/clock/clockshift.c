/*
 * clockshift: an LD_PRELOAD shim that moves a process's wall clock by an
 * offset it reads, on every call, from a memory-mapped file (8 bytes: a
 * signed 64-bit count of microseconds, native byte order). The chaos suite
 * writes that file to move redis-server's clock forward and back while it
 * runs; the monotonic clocks are left alone, as a real NTP step leaves them.
 *
 * It calls the kernel directly (syscall) instead of looking up the real
 * functions with dlsym, and never allocates: libfaketime's dlsym path clashes
 * with redis-server's allocator (jemalloc) at start-up.
 *
 * Environment: HOLDFAST_CLOCK_OFFSET_FILE, the offset file (absent: no shift).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int64_t *offset_us;
static int mapped;

static int64_t offset(void) {
  if (!mapped) {
    mapped = 1;
    const char *path = getenv("HOLDFAST_CLOCK_OFFSET_FILE");
    if (path) {
      int fd = open(path, O_RDONLY);
      if (fd >= 0) {
        void *p = mmap(0, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (p != MAP_FAILED) offset_us = p;
      }
    }
  }
  return offset_us ? *offset_us : 0;
}

static void shift(struct timespec *ts) {
  int64_t us = (int64_t)ts->tv_sec * 1000000 + ts->tv_nsec / 1000 + offset();
  ts->tv_sec = us / 1000000;
  ts->tv_nsec = (us % 1000000) * 1000 + ts->tv_nsec % 1000;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
  int r = (int)syscall(SYS_clock_gettime, id, ts);
  if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) shift(ts);
  return r;
}

int gettimeofday(struct timeval *tv, void *tz) {
  struct timespec ts;
  int r = clock_gettime(CLOCK_REALTIME, &ts);
  if (r == 0 && tv) {
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
  }
  (void)tz;
  return r;
}

time_t time(time_t *out) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (out) *out = ts.tv_sec;
  return ts.tv_sec;
}
