/* The Redis servers of the redis suites (redis_server.h). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include "redis_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

long long rs_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void rs_sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int bind_port(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    socklen_t len = sizeof a;
    int got = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        got = ntohs(a.sin_port);
    close(fd);
    return got;
}

int rs_free_port(void) {
    /* a port below 55000 whose cluster bus port (+10000) is free too */
    for (int i = 0; i < 100; ++i) {
        int p = bind_port(0);
        if (p > 1024 && p != 6379 && p < 55000 && bind_port(p + 10000) == p + 10000) return p;
    }
    return -1;
}

static int accepts(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    int ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

/* In a child: stdin and stderr on /dev/null, stdout on `out` (or
 * /dev/null when it is -1), so that no pipe of the test runner is held. */
static void detach_stdio(int out) {
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(out >= 0 ? out : null, 1);
        dup2(null, 2);
    }
}

static int spawn(rs_server *s) {
    char port[16], log[128];
    snprintf(port, sizeof port, "%d", s->port);
    snprintf(log, sizeof log, "%s/redis.log", s->dir);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        detach_stdio(-1);
        char conf[128];
        snprintf(conf, sizeof conf, "%s/nodes.conf", s->dir);
        const char *argv[] = {"redis-server",
                              "--port",
                              port,
                              "--bind",
                              "127.0.0.1",
                              "--save",
                              "",
                              "--appendonly",
                              "no",
                              "--daemonize",
                              "no",
                              "--dir",
                              s->dir,
                              "--logfile",
                              log,
                              "--cluster-enabled",
                              "yes",
                              "--cluster-config-file",
                              conf,
                              "--cluster-node-timeout",
                              "2000",
                              NULL};
        if (!s->cluster) argv[15] = NULL; /* up to --logfile */
        execvp("redis-server", (char *const *)argv);
        _exit(127);
    }
    s->pid = pid;
    for (long long end = rs_now_ms() + 10000; rs_now_ms() < end; rs_sleep_ms(10)) {
        if (accepts(s->port)) return 0;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            s->pid = 0;
            fprintf(stderr, "redis-server exited (status %d); see %s\n", st, log);
            return -1;
        }
    }
    fprintf(stderr, "redis-server did not accept connections on port %d\n", s->port);
    rs_kill(s);
    return -1;
}

static int start_as(rs_server *s, int cluster) {
    memset(s, 0, sizeof *s);
    s->cluster = cluster;
    snprintf(s->dir, sizeof s->dir, "/tmp/tf-redis-XXXXXX");
    if (!mkdtemp(s->dir)) return -1;
    s->port = rs_free_port();
    if (s->port < 0) return -1;
    return spawn(s);
}

int rs_start(rs_server *s) { return start_as(s, 0); }

int rs_start_cluster_node(rs_server *s) { return start_as(s, 1); }

int rs_restart(rs_server *s) { return spawn(s); }

void rs_kill(rs_server *s) {
    if (s->pid <= 0) return;
    kill(s->pid, SIGCONT);
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
}

void rs_pause(rs_server *s) {
    if (s->pid > 0) kill(s->pid, SIGSTOP);
}

void rs_resume(rs_server *s) {
    if (s->pid > 0) kill(s->pid, SIGCONT);
}

void rs_stop(rs_server *s) {
    rs_kill(s);
    if (s->dir[0]) {
        char path[160];
        const char *files[] = {"redis.log", "dump.rdb", "nodes.conf"};
        for (size_t i = 0; i < sizeof files / sizeof *files; ++i) {
            snprintf(path, sizeof path, "%s/%s", s->dir, files[i]);
            unlink(path);
        }
        rmdir(s->dir);
        s->dir[0] = '\0';
    }
}

/* Runs redis-cli with `args` (NULL-terminated), its stdin, stdout and
 * stderr on /dev/null, or on `out` (a file of `cap` bytes read back) when
 * given; returns its exit status (or -1). */
static int redis_cli(const char *const *args, char *out, size_t cap) {
    char path[] = "/tmp/tf-redis-cli-XXXXXX";
    int fd = out ? mkstemp(path) : -1;
    if (out && fd < 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        detach_stdio(out ? fd : -1);
        const char *argv[32];
        size_t n = 0;
        argv[n++] = "redis-cli";
        for (size_t i = 0; args[i] && n < 31; ++i) argv[n++] = args[i];
        argv[n] = NULL;
        execvp("redis-cli", (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (out) {
        ssize_t got = pread(fd, out, cap - 1, 0);
        out[got > 0 ? got : 0] = '\0';
        close(fd);
        unlink(path);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int node_says(const rs_server *s, const char *command, char *out, size_t cap) {
    char port[16];
    snprintf(port, sizeof port, "%d", s->port);
    const char *args[] = {"-h", "127.0.0.1", "-p", port, "cluster", command, NULL};
    return redis_cli(args, out, cap);
}

void rs_cluster_stop(rs_cluster *c) {
    for (int i = 0; i < 3; ++i) rs_stop(&c->node[i]);
}

int rs_suite_start(rs_server *s, rs_cluster *c) {
    if (rs_start(s) != 0) return -1;
    if (rs_cluster_start(c) != 0) {
        rs_stop(s);
        return -1;
    }
    return 0;
}

void rs_suite_stop(rs_server *s, rs_cluster *c) {
    rs_stop(s);
    rs_cluster_stop(c);
}

int rs_cluster_start(rs_cluster *c) {
    memset(c, 0, sizeof *c);
    for (int i = 0; i < 3; ++i) {
        if (start_as(&c->node[i], 1) != 0) {
            rs_cluster_stop(c);
            return -1;
        }
    }
    char addr[3][32];
    for (int i = 0; i < 3; ++i) snprintf(addr[i], sizeof addr[i], "127.0.0.1:%d", c->node[i].port);
    const char *create[] = {"--cluster",          "create", addr[0],         addr[1], addr[2],
                            "--cluster-replicas", "0",      "--cluster-yes", NULL};
    if (redis_cli(create, NULL, 0) != 0) {
        fprintf(stderr, "redis-cli --cluster create failed\n");
        rs_cluster_stop(c);
        return -1;
    }
    char buf[4096];
    for (int i = 0; i < 3; ++i) {
        int ok = 0;
        for (long long end = rs_now_ms() + 20000; !ok && rs_now_ms() < end;) {
            ok = node_says(&c->node[i], "info", buf, sizeof buf) == 0 && strstr(buf, "cluster_state:ok") != NULL;
            if (!ok) rs_sleep_ms(50);
        }
        if (!ok || node_says(&c->node[i], "myid", buf, sizeof buf) != 0 || strlen(buf) < 40) {
            fprintf(stderr, "cluster node %d (port %d) did not become ready\n", i, c->node[i].port);
            rs_cluster_stop(c);
            return -1;
        }
        snprintf(c->id[i], sizeof c->id[i], "%.40s", buf);
    }
    return 0;
}

int rs_cluster_reshard(rs_cluster *c, int from, int to, int slots) {
    char addr[32], count[16];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", c->node[from].port);
    snprintf(count, sizeof count, "%d", slots);
    const char *args[] = {"--cluster", "reshard",         addr,  "--cluster-from", c->id[from], "--cluster-to",
                          c->id[to],   "--cluster-slots", count, "--cluster-yes",  NULL};
    return redis_cli(args, NULL, 0);
}

int rs_cluster_owner(const rs_cluster *c, int n, unsigned slot) {
    /* CLUSTER SLOTS through redis-cli: lines start, end, host, port, id, ... */
    char port[16], buf[8192];
    snprintf(port, sizeof port, "%d", c->node[n].port);
    const char *args[] = {"-h", "127.0.0.1", "-p", port, "cluster", "slots", NULL};
    if (redis_cli(args, buf, sizeof buf) != 0) return -1;
    unsigned long vals[4];
    int have = 0;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *end;
        unsigned long v = strtoul(line, &end, 10);
        if (end == line || *end != '\0') continue; /* a host or an id */
        vals[have++] = v;
        if (have == 3) { /* start, end, master's port */
            if (slot >= vals[0] && slot <= vals[1])
                for (int i = 0; i < 3; ++i)
                    if ((unsigned long)c->node[i].port == vals[2]) return i;
            have = 0;
        }
    }
    return -1;
}
