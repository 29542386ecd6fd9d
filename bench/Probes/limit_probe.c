/*
 * XCall's own probe of this machine's round-trip limits between two processes, used by the
 * call-cost benchmark for its limit-spin, limit-tcp and limit-tcp-spin rows.
 *
 *   limit_probe spin     BYTES ROUNDS  two processes poll a shared page (no kernel call on the path)
 *   limit_probe tcp      BYTES ROUNDS  loopback TCP, TCP_NODELAY, blocking reads (each side sleeps in read)
 *   limit_probe tcp-spin BYTES ROUNDS  the same, but both sides busy-poll: non-blocking recv in a loop until
 *                                      the bytes are there (what a transport that spins before it blocks pays)
 *   limit_probe copy BYTES ROUNDS   one way, two copies: the caller copies its buffer into shared memory,
 *                                   the other process copies it out into a buffer of its own (a large
 *                                   argument over a ring); the answer is a flag
 *   limit_probe cma  BYTES ROUNDS   one way, one copy: the other process reads the caller's buffer into
 *                                   its own with process_vm_readv (what Open MPI's vader/sm does for
 *                                   large messages); exits 3 where the kernel refuses it
 *
 * Each spin/tcp/tcp-spin round trip copies BYTES into the shared buffer (or the socket) and back. Prints one line:
 *   limit <mode> <bytes> <best-of-5 ns per round trip> <median-of-5 ns per round trip>
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_BYTES 65536
#define MAX_BULK_BYTES (16 << 20)
#define BATCHES 5

struct page {
    _Alignas(128) atomic_long ask;    /* written by the caller */
    _Alignas(128) atomic_long answer; /* written by the echoer */
    _Alignas(128) unsigned char in[MAX_BYTES];
    _Alignas(128) unsigned char out[MAX_BYTES];
};

static double clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *mode, int bytes, double *ns)
{
    qsort(ns, BATCHES, sizeof ns[0], by_value);
    printf("limit %s %d %.1f %.1f\n", mode, bytes, ns[0], ns[BATCHES / 2]);
}

static int spin(int bytes, long rounds)
{
    struct page *p = mmap(NULL, sizeof *p, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    long total = rounds * BATCHES;
    pid_t child = fork();
    if (child == 0) {
        for (long seq = 1; seq <= total; seq++) {
            while (atomic_load_explicit(&p->ask, memory_order_acquire) != seq) relax();
            memcpy(p->out, p->in, (size_t)bytes);
            atomic_store_explicit(&p->answer, seq, memory_order_release);
        }
        _exit(0);
    }
    unsigned char local[MAX_BYTES];
    memset(local, 0x5a, sizeof local);
    double ns[BATCHES];
    long seq = 0;
    for (int b = 0; b < BATCHES; b++) {
        double start = clock_ns();
        for (long i = 0; i < rounds; i++) {
            seq++;
            memcpy(p->in, local, (size_t)bytes);
            atomic_store_explicit(&p->ask, seq, memory_order_release);
            while (atomic_load_explicit(&p->answer, memory_order_acquire) != seq) relax();
            memcpy(local, p->out, (size_t)bytes);
        }
        ns[b] = (clock_ns() - start) / (double)rounds;
    }
    waitpid(child, NULL, 0);
    report("spin", bytes, ns);
    return 0;
}

/* Blocking: read sleeps until data arrives. Busy polling: recv with MSG_DONTWAIT returns EAGAIN at once
 * while nothing is there, and the loop asks again (no sleep, no wake-up on the path). */
static int read_full(int fd, unsigned char *buf, int n, int busy)
{
    for (int got = 0; got < n;) {
        ssize_t r = busy ? recv(fd, buf + got, (size_t)(n - got), MSG_DONTWAIT) : read(fd, buf + got, (size_t)(n - got));
        if (r < 0 && busy && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (r <= 0) return -1;
        got += (int)r;
    }
    return 0;
}

static int tcp(int bytes, long rounds, int busy)
{
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) || listen(listener, 1)) return 1;
    getsockname(listener, (struct sockaddr *)&addr, &len);
    long total = rounds * BATCHES;
    pid_t child = fork();
    if (child == 0) {
        int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        if (connect(s, (struct sockaddr *)&addr, sizeof addr)) _exit(1);
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        unsigned char buf[MAX_BYTES];
        for (long i = 0; i < total; i++) {
            if (read_full(s, buf, bytes, busy)) _exit(1);
            if (write(s, buf, (size_t)bytes) != bytes) _exit(1);
        }
        _exit(0);
    }
    int s = accept(listener, NULL, NULL), one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    unsigned char buf[MAX_BYTES];
    memset(buf, 0x5a, sizeof buf);
    double ns[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        double start = clock_ns();
        for (long i = 0; i < rounds; i++) {
            if (write(s, buf, (size_t)bytes) != bytes || read_full(s, buf, bytes, busy)) return 1;
        }
        ns[b] = (clock_ns() - start) / (double)rounds;
    }
    waitpid(child, NULL, 0);
    report(busy ? "tcp-spin" : "tcp", bytes, ns);
    return 0;
}

/* copy and cma: BYTES from the caller's buffer into the other process's buffer, a flag back. */
static int bulk(int cma, int bytes, long rounds)
{
    struct flags { _Alignas(128) atomic_long ask; _Alignas(128) atomic_long answer; _Alignas(128) atomic_int failed; };
    struct flags *f = mmap(NULL, sizeof *f, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    unsigned char *shared = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    unsigned char *local = malloc((size_t)bytes);
    if (f == MAP_FAILED || shared == MAP_FAILED || local == NULL) return 1;
    memset(local, 0x5a, (size_t)bytes);
    memset(shared, 0, (size_t)bytes);
    pid_t parent = getpid();
    long total = rounds * BATCHES + 1; /* one warm-up round */
    pid_t child = fork();
    if (child == 0) {
        unsigned char *own = malloc((size_t)bytes);
        if (own == NULL) _exit(1);
        memset(own, 0, (size_t)bytes);
        for (long seq = 1; seq <= total; seq++) {
            while (atomic_load_explicit(&f->ask, memory_order_acquire) != seq) relax();
            if (cma) {
                struct iovec to = { own, (size_t)bytes }, from = { local, (size_t)bytes };
                if (process_vm_readv(parent, &to, 1, &from, 1, 0) != bytes) atomic_store(&f->failed, 1);
            } else {
                memcpy(own, shared, (size_t)bytes);
            }
            atomic_store_explicit(&f->answer, seq, memory_order_release);
        }
        _exit(0);
    }
    double ns[BATCHES];
    long seq = 0;
    for (int b = -1; b < BATCHES; b++) {
        long n = b < 0 ? 1 : rounds;
        double start = clock_ns();
        for (long i = 0; i < n; i++) {
            seq++;
            if (!cma) memcpy(shared, local, (size_t)bytes);
            atomic_store_explicit(&f->ask, seq, memory_order_release);
            while (atomic_load_explicit(&f->answer, memory_order_acquire) != seq) relax();
        }
        if (b >= 0) ns[b] = (clock_ns() - start) / (double)rounds;
    }
    waitpid(child, NULL, 0);
    if (atomic_load(&f->failed)) return 3;
    report(cma ? "cma" : "copy", bytes, ns);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: limit_probe spin|tcp|tcp-spin|copy|cma BYTES ROUNDS\n");
        return 2;
    }
    int bytes = atoi(argv[2]);
    long rounds = atol(argv[3]);
    int isBulk = strcmp(argv[1], "copy") == 0 || strcmp(argv[1], "cma") == 0;
    if (bytes < 1 || bytes > (isBulk ? MAX_BULK_BYTES : MAX_BYTES) || rounds < 1) return 2;
    if (isBulk) return bulk(strcmp(argv[1], "cma") == 0, bytes, rounds);
    if (strcmp(argv[1], "spin") == 0) return spin(bytes, rounds);
    if (strcmp(argv[1], "tcp") == 0) return tcp(bytes, rounds, 0);
    if (strcmp(argv[1], "tcp-spin") == 0) return tcp(bytes, rounds, 1);
    return 2;
}
