/*
 * fencekit clock shim: an LD_PRELOAD library that skews a process's clocks by an offset and a rate read from a
 * file at run time, so a test can jump or drift a server's clock while it runs.
 *
 *   FENCEKIT_CLOCK_FILE=/path/clock  file content: "<offset_ns> <rate>\n"   e.g. "30000000000 1"
 *
 * From the moment the shim sees new content (it re-checks the file at most every CHECK_NS), every clock reads
 *   fake(t) = base + (t - anchor) * rate       with anchor = that clock's real time at the change,
 * where base is, for wall clocks (REALTIME, TAI), anchor + offset: they may step back, as a wall clock does when
 * NTP steps it. For monotonic clocks (MONOTONIC, MONOTONIC_RAW/COARSE, BOOTTIME) base is what the clock read just
 * before the change plus the forward part of the jump (the new offset above the previous one, counted from no
 * less than zero): a monotonic clock never runs backwards, so a heal (offset 0) or a backward jump leaves it where
 * it is, running at the new rate, and the next forward jump moves it forward again. Had it stepped back, every
 * timer a server had armed on it would have stalled for the length of the jump (Redis' cron, and with it active
 * expiry; ZooKeeper's session and sync deadlines).
 * clock_gettime, gettimeofday and time are all skewed, so a server sees one consistent jump whichever clock it
 * consults (Redis 7.0 expires keys by gettimeofday; newer versions and the JVM's nanoTime use CLOCK_MONOTONIC).
 *
 * A program that sleeps until an absolute deadline on a skewed clock (the JVM: Thread.sleep, Object.wait and
 * LockSupport.park all become pthread_cond_timedwait on CLOCK_MONOTONIC at "now + d") hands the kernel a deadline
 * in fake time, which the kernel reads as real time: under a +5 s jump every 250 ms wait took 5.25 s, and under a
 * 3x drift every wait grew longer instead of shorter. The shim therefore converts such deadlines back to real
 * time (pthread_cond_timedwait, pthread_cond_clockwait, clock_nanosleep with TIMER_ABSTIME, sem_timedwait,
 * sem_clockwait): a wait of d on the skewed clock lasts d / rate in real time, and ends with the fault.
 *
 * Written for servers that libfaketime breaks: no malloc (jemalloc in Redis may call clocks while it
 * initialises), no stdio, and the real functions are resolved with a per-thread guard that falls back to the raw
 * syscall while dlsym itself is running.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NS 2000000LL /* re-read the skew file at most every 2 ms */
#define MAX_CLOCK 12       /* clock ids 0..11 cover REALTIME..TAI */
#define SLOTS 64

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*gettimeofday_fn)(struct timeval *, void *);

struct skew {
  double rate;
  int64_t anchor[MAX_CLOCK]; /* real time of each clock when this skew took effect */
  int64_t base[MAX_CLOCK];   /* what each clock reads at its anchor */
};

static struct skew slots[SLOTS];
static _Atomic(struct skew *) current = NULL; /* NULL: no skew */
static atomic_uint next_slot = 0;
static atomic_flag reloading = ATOMIC_FLAG_INIT;
static _Atomic int64_t last_check_ns = 0;
static ino_t seen_ino = 0;
static struct timespec seen_mtime = {0, 0};
static const char *skew_path = NULL;
/* A copy: Redis reuses the original environment's memory for its process title (setproctitle). */
static char skew_path_copy[4096];
static atomic_int initialised = 0;

static clock_gettime_fn real_clock_gettime_fn = NULL;
static gettimeofday_fn real_gettimeofday_fn = NULL;
static __thread int resolving = 0;

static int real_clock_gettime(clockid_t clk, struct timespec *ts) {
  if (real_clock_gettime_fn == NULL && !resolving) {
    resolving = 1;
    real_clock_gettime_fn = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    resolving = 0;
  }
  if (real_clock_gettime_fn != NULL) return real_clock_gettime_fn(clk, ts);
  return (int)syscall(SYS_clock_gettime, clk, ts);
}

static int real_gettimeofday(struct timeval *tv, void *tz) {
  if (real_gettimeofday_fn == NULL && !resolving) {
    resolving = 1;
    real_gettimeofday_fn = (gettimeofday_fn)dlsym(RTLD_NEXT, "gettimeofday");
    resolving = 0;
  }
  if (real_gettimeofday_fn != NULL) return real_gettimeofday_fn(tv, tz);
  return (int)syscall(SYS_gettimeofday, tv, tz);
}

static int64_t to_ns(const struct timespec *ts) { return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec; }

static int skewed_clock(clockid_t clk) { return clk >= 0 && clk < MAX_CLOCK && clk != CLOCK_PROCESS_CPUTIME_ID && clk != CLOCK_THREAD_CPUTIME_ID; }

/* Clocks that must never run backwards. */
static int monotonic_clock(clockid_t clk) {
  return clk == CLOCK_MONOTONIC || clk == CLOCK_MONOTONIC_RAW || clk == CLOCK_MONOTONIC_COARSE || clk == CLOCK_BOOTTIME || clk == CLOCK_BOOTTIME_ALARM;
}

/* fake(t) under skew s; the identity when s is NULL. */
static int64_t fake_under(const struct skew *s, clockid_t clk, int64_t real_ns) {
  if (s == NULL) return real_ns;
  return s->base[clk] + (int64_t)((double)(real_ns - s->anchor[clk]) * s->rate);
}

/* Parses "<offset_ns> <rate>" without stdio or locale. */
static int parse_skew(const char *text, int64_t *offset, double *rate) {
  const char *p = text;
  int negative = 0;
  int64_t value = 0;
  while (*p == ' ' || *p == '\t') p++;
  if (*p == '-') negative = 1, p++;
  if (*p < '0' || *p > '9') return -1;
  while (*p >= '0' && *p <= '9') value = value * 10 + (*p++ - '0');
  *offset = negative ? -value : value;
  while (*p == ' ' || *p == '\t') p++;
  double whole = 0, scale = 1;
  if (*p < '0' || *p > '9') return -1;
  while (*p >= '0' && *p <= '9') whole = whole * 10 + (*p++ - '0');
  if (*p == '.') {
    p++;
    while (*p >= '0' && *p <= '9') whole = whole * 10 + (*p++ - '0'), scale *= 10;
  }
  *rate = whole / scale;
  return *rate > 0 ? 0 : -1;
}

/* The wall-clock offset in force: how far a new offset moves the monotonic clocks forward is measured from it. */
static int64_t offset_in_force = 0;

/* Makes (offset, rate) the skew from now on; monotonic clocks keep any lead they have (see the header). */
static void apply_skew(int64_t offset, double rate) {
  struct skew *old = atomic_load(&current);
  int64_t forward = offset - (offset_in_force > 0 ? offset_in_force : 0);
  if (forward < 0) forward = 0;
  offset_in_force = offset;
  struct skew *slot = &slots[atomic_fetch_add(&next_slot, 1) % SLOTS];
  int identity = rate == 1.0;
  slot->rate = rate;
  for (clockid_t clk = 0; clk < MAX_CLOCK; clk++) {
    struct timespec ts = {0, 0};
    slot->anchor[clk] = slot->base[clk] = 0;
    if (!skewed_clock(clk) || real_clock_gettime(clk, &ts) != 0) continue;
    int64_t real = to_ns(&ts);
    int64_t base = monotonic_clock(clk) ? fake_under(old, clk, real) + forward : real + offset;
    slot->anchor[clk] = real;
    slot->base[clk] = base;
    if (base != real) identity = 0;
  }
  atomic_store(&current, identity ? NULL : slot);
}

static void reload(void) {
  struct stat st;
  if (stat(skew_path, &st) != 0) {
    /* No file: no skew from now on (monotonic clocks still never step back). */
    if (seen_ino != 0) apply_skew(0, 1.0);
    seen_ino = 0;
    return;
  }
  if (st.st_ino == seen_ino && st.st_mtim.tv_sec == seen_mtime.tv_sec && st.st_mtim.tv_nsec == seen_mtime.tv_nsec) return;
  char buffer[128];
  int fd = open(skew_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, buffer, sizeof buffer - 1);
  close(fd);
  if (n <= 0) return;
  buffer[n] = '\0';
  int64_t offset;
  double rate;
  if (parse_skew(buffer, &offset, &rate) != 0) return;
  seen_ino = st.st_ino;
  seen_mtime = st.st_mtim;
  apply_skew(offset, rate);
}

/* Re-reads the file when CHECK_NS has passed; only one thread reloads, the others keep the current skew. */
static void maybe_reload(void) {
  if (!atomic_load(&initialised)) {
    const char *path = getenv("FENCEKIT_CLOCK_FILE");
    size_t length = path == NULL ? 0 : strlen(path);
    if (length > 0 && length < sizeof skew_path_copy) {
      memcpy(skew_path_copy, path, length + 1);
      skew_path = skew_path_copy;
    }
    atomic_store(&initialised, 1);
  }
  if (skew_path == NULL || resolving) return;
  struct timespec now;
  if (real_clock_gettime(CLOCK_MONOTONIC_COARSE, &now) != 0) return;
  int64_t now_ns = to_ns(&now);
  if (now_ns - atomic_load(&last_check_ns) < CHECK_NS) return;
  if (atomic_flag_test_and_set(&reloading)) return;
  atomic_store(&last_check_ns, now_ns);
  reload();
  atomic_flag_clear(&reloading);
}

static int64_t skew_ns(clockid_t clk, int64_t real_ns) {
  if (!skewed_clock(clk)) return real_ns;
  return fake_under(atomic_load(&current), clk, real_ns);
}

int clock_gettime(clockid_t clk, struct timespec *ts) {
  int rc = real_clock_gettime(clk, ts);
  if (rc != 0 || !skewed_clock(clk)) return rc;
  maybe_reload();
  int64_t ns = skew_ns(clk, to_ns(ts));
  ts->tv_sec = ns / 1000000000LL;
  ts->tv_nsec = ns % 1000000000LL;
  return 0;
}

int gettimeofday(struct timeval *tv, void *tz) {
  int rc = real_gettimeofday(tv, tz);
  if (rc != 0) return rc;
  maybe_reload();
  int64_t ns = skew_ns(CLOCK_REALTIME, (int64_t)tv->tv_sec * 1000000000LL + (int64_t)tv->tv_usec * 1000);
  tv->tv_sec = ns / 1000000000LL;
  tv->tv_usec = (ns % 1000000000LL) / 1000;
  return 0;
}

time_t time(time_t *out) {
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}

/* ---- absolute deadlines: from the skewed clock the caller read back to the real one the kernel waits on ---- */

/* The real time at which clock `clk` will read `fake` under the current skew (glibc declares every deadline
   argument below nonnull, so none is checked). */
static struct timespec real_deadline(clockid_t clk, const struct timespec *fake) {
  maybe_reload();
  struct skew *s = atomic_load(&current);
  if (s == NULL || !skewed_clock(clk)) return *fake;
  int64_t real = s->anchor[clk] + (int64_t)((double)(to_ns(fake) - s->base[clk]) / s->rate);
  if (real < 0) real = 0;
  return (struct timespec){real / 1000000000LL, real % 1000000000LL};
}

/* glibc keeps a condition variable's clock in bit 1 of __wrefs (pthread_condattr_setclock); 0 is REALTIME. */
static clockid_t cond_clock(const pthread_cond_t *cond) {
  return (cond->__data.__wrefs & 2) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

typedef int (*cond_timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
typedef int (*cond_clockwait_fn)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);
typedef int (*sem_timedwait_fn)(sem_t *, const struct timespec *);
typedef int (*sem_clockwait_fn)(sem_t *, clockid_t, const struct timespec *);

/* Resolved once; dlsym would hand back pthread_cond_timedwait's pre-2.3.2 (old condvar) version, so ask for 2.3.2. */
static void *next_symbol(const char *name, const char *version) {
  void *f = version ? dlvsym(RTLD_NEXT, name, version) : NULL;
  return f ? f : dlsym(RTLD_NEXT, name);
}

int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *abstime) {
  static cond_timedwait_fn real = NULL;
  if (real == NULL) real = (cond_timedwait_fn)next_symbol("pthread_cond_timedwait", "GLIBC_2.3.2");
  struct timespec deadline = real_deadline(cond_clock(cond), abstime);
  return real(cond, mutex, &deadline);
}

int pthread_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clk, const struct timespec *abstime) {
  static cond_clockwait_fn real = NULL;
  if (real == NULL) real = (cond_clockwait_fn)next_symbol("pthread_cond_clockwait", NULL);
  struct timespec deadline = real_deadline(clk, abstime);
  return real(cond, mutex, clk, &deadline);
}

int clock_nanosleep(clockid_t clk, int flags, const struct timespec *request, struct timespec *remain) {
  static clock_nanosleep_fn real = NULL;
  if (real == NULL) real = (clock_nanosleep_fn)next_symbol("clock_nanosleep", NULL);
  if (!(flags & TIMER_ABSTIME) || request == NULL) return real(clk, flags, request, remain);
  struct timespec deadline = real_deadline(clk, request);
  return real(clk, flags, &deadline, remain);
}

int sem_timedwait(sem_t *sem, const struct timespec *abstime) {
  static sem_timedwait_fn real = NULL;
  if (real == NULL) real = (sem_timedwait_fn)next_symbol("sem_timedwait", NULL);
  struct timespec deadline = real_deadline(CLOCK_REALTIME, abstime);
  return real(sem, &deadline);
}

int sem_clockwait(sem_t *sem, clockid_t clk, const struct timespec *abstime) {
  static sem_clockwait_fn real = NULL;
  if (real == NULL) real = (sem_clockwait_fn)next_symbol("sem_clockwait", NULL);
  struct timespec deadline = real_deadline(clk, abstime);
  return real(sem, clk, &deadline);
}
