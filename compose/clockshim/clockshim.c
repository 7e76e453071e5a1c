/*
 * clockshim: an LD_PRELOAD library that shifts (and optionally speeds up) the
 * wall clock one process sees, so lockbench can make one Redis server's clock
 * jump without touching the machine's clock or the other servers.
 *
 * Why not libfaketime: Debian's libfaketime hangs redis-server at start (its
 * malloc-using init races the jemalloc redis links). This shim therefore never
 * allocates, never calls stdio, and reaches the kernel through raw syscalls so
 * it cannot recurse into itself or into an allocator.
 *
 * Control file ($LOCKBENCH_CLOCK_FILE), one line of three signed integers:
 *
 *     <offset_ns> <speed_ppm> <anchor_ns>
 *
 * fake = real + offset + (real - anchor) * (speed_ppm - 1000000) / 1000000
 *
 * so "9000000000 1000000 0" is a clock 9 s ahead and "0 2000000 <now>" one
 * that runs twice as fast from now on. The file is re-read at most every
 * 200 ms (measured on the monotonic clock), which bounds the syscall cost and
 * still applies a jump within a fraction of a second.
 *
 * Only CLOCK_REALTIME and CLOCK_REALTIME_COARSE are shifted (with
 * gettimeofday and time, which Redis 7 uses for key expiry: ustime() calls
 * gettimeofday); monotonic clocks pass through, as a real NTP step would
 * leave them.
 */
#define _GNU_SOURCE
/* Rename the libc prototypes out of the way: their exact signatures differ
 * between glibc versions, and ours need only be ABI-compatible. */
#define clock_gettime lockbench_libc_clock_gettime
#define gettimeofday lockbench_libc_gettimeofday
#define time lockbench_libc_time
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#undef clock_gettime
#undef gettimeofday
#undef time

#define EXPORT __attribute__((visibility("default")))
#define ENV_NAME "LOCKBENCH_CLOCK_FILE"
#define RELOAD_NS 200000000LL
#define PPM_ONE 1000000LL

/* The path is copied at load time: redis rewrites its argv/environ area for
 * its process title, so a pointer kept from getenv would later read garbage. */
static char path[4096];
static int path_state; /* 0 unknown, 1 set, 2 absent */

/* The current clock state, published under a sequence lock so that readers
 * on other threads never see a half-written triple. */
static int64_t st_offset, st_ppm = PPM_ONE, st_anchor;
static unsigned st_seq;
static int64_t last_read_ns; /* monotonic time of the last file read, 0 = never */

static void init_path(void) {
	if (__atomic_load_n(&path_state, __ATOMIC_ACQUIRE) != 0)
		return;
	const char *p = getenv(ENV_NAME);
	int state = 2;
	if (p != NULL && p[0] != '\0') {
		size_t i = 0;
		for (; p[i] != '\0' && i + 1 < sizeof path; i++)
			path[i] = p[i];
		path[i] = '\0';
		state = 1;
	}
	__atomic_store_n(&path_state, state, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void clockshim_init(void) { init_path(); }

static int raw_gettime(clockid_t clk, struct timespec *ts) {
	return (int)syscall(SYS_clock_gettime, clk, ts);
}

static int64_t ts_ns(const struct timespec *ts) {
	return (int64_t)ts->tv_sec * 1000000000LL + (int64_t)ts->tv_nsec;
}

/* parse_int reads an optionally signed decimal at *s, advancing *s. */
static int parse_int(const char **s, const char *end, int64_t *out) {
	const char *p = *s;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	int neg = 0;
	if (p < end && (*p == '-' || *p == '+')) {
		neg = *p == '-';
		p++;
	}
	if (p >= end || *p < '0' || *p > '9')
		return 0;
	uint64_t v = 0;
	while (p < end && *p >= '0' && *p <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*p - '0');
		p++;
	}
	if (v > (uint64_t)INT64_MAX)
		return 0;
	*out = neg ? -(int64_t)v : (int64_t)v;
	*s = p;
	return 1;
}

static void reload(void) {
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return; /* no file: keep the last state */
	char buf[128];
	long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return;
	const char *p = buf, *end = buf + n;
	int64_t off = 0, ppm = PPM_ONE, anchor = 0;
	if (!parse_int(&p, end, &off))
		return;
	/* speed and anchor are optional; a malformed tail keeps speed 1 */
	if (!parse_int(&p, end, &ppm) || !parse_int(&p, end, &anchor) || ppm <= 0) {
		ppm = PPM_ONE;
		anchor = 0;
	}
	__atomic_add_fetch(&st_seq, 1, __ATOMIC_ACQ_REL); /* odd: writing */
	__atomic_store_n(&st_offset, off, __ATOMIC_RELAXED);
	__atomic_store_n(&st_ppm, ppm, __ATOMIC_RELAXED);
	__atomic_store_n(&st_anchor, anchor, __ATOMIC_RELAXED);
	__atomic_add_fetch(&st_seq, 1, __ATOMIC_ACQ_REL); /* even: done */
}

static void maybe_reload(void) {
	init_path();
	if (__atomic_load_n(&path_state, __ATOMIC_ACQUIRE) != 1)
		return;
	struct timespec m;
	if (raw_gettime(CLOCK_MONOTONIC, &m) != 0)
		return;
	int64_t now = ts_ns(&m);
	int64_t last = __atomic_load_n(&last_read_ns, __ATOMIC_ACQUIRE);
	if (last != 0 && now - last < RELOAD_NS)
		return;
	/* one thread reloads; the others go on with the previous state */
	if (!__atomic_compare_exchange_n(&last_read_ns, &last, now, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	reload();
}

static int64_t fake_ns(int64_t real) {
	int64_t off, ppm, anchor;
	unsigned s1, s2;
	do {
		s1 = __atomic_load_n(&st_seq, __ATOMIC_ACQUIRE);
		off = __atomic_load_n(&st_offset, __ATOMIC_RELAXED);
		ppm = __atomic_load_n(&st_ppm, __ATOMIC_RELAXED);
		anchor = __atomic_load_n(&st_anchor, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&st_seq, __ATOMIC_RELAXED);
	} while (s1 != s2 || (s1 & 1));
	int64_t fake = real + off;
	if (ppm != PPM_ONE) {
#ifdef __SIZEOF_INT128__
		fake += (int64_t)(((__int128)(real - anchor) * (ppm - PPM_ONE)) / PPM_ONE);
#else
		fake += (int64_t)((double)(real - anchor) * (double)(ppm - PPM_ONE) / (double)PPM_ONE);
#endif
	}
	return fake;
}

static int fake_realtime(clockid_t clk, struct timespec *ts) {
	struct timespec r;
	if (raw_gettime(clk, &r) != 0)
		return -1;
	maybe_reload();
	int64_t f = fake_ns(ts_ns(&r));
	int64_t sec = f / 1000000000LL, nsec = f % 1000000000LL;
	if (nsec < 0) {
		nsec += 1000000000LL;
		sec--;
	}
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = (long)nsec;
	return 0;
}

EXPORT int clock_gettime(clockid_t clk, struct timespec *ts) {
	if (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE)
		return fake_realtime(clk, ts);
	return raw_gettime(clk, ts);
}

EXPORT int gettimeofday(struct timeval *tv, void *tz) {
	if (tz != NULL) {
		/* obsolete; report UTC like the kernel does on most systems */
		int *z = (int *)tz;
		z[0] = 0;
		z[1] = 0;
	}
	if (tv == NULL)
		return 0;
	struct timespec ts;
	if (fake_realtime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = (suseconds_t)(ts.tv_nsec / 1000);
	return 0;
}

EXPORT time_t time(time_t *out) {
	struct timespec ts;
	if (fake_realtime(CLOCK_REALTIME, &ts) != 0)
		return (time_t)-1;
	if (out != NULL)
		*out = ts.tv_sec;
	return ts.tv_sec;
}
