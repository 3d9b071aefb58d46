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

static int spawn(rs_server *s) {
    char port[16], log[128];
    snprintf(port, sizeof port, "%d", s->port);
    snprintf(log, sizeof log, "%s/redis.log", s->dir);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
        }
        execlp("redis-server", "redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly",
               "no", "--daemonize", "no", "--dir", s->dir, "--logfile", log, (char *)NULL);
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

int rs_start(rs_server *s) {
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "/tmp/tf-redis-XXXXXX");
    if (!mkdtemp(s->dir)) return -1;
    s->port = rs_free_port();
    if (s->port < 0) return -1;
    return spawn(s);
}

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
