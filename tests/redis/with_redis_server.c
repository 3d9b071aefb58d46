/* Runs a program with a redis-server of its own: starts one on a free
 * loopback port (redis_server.c), runs `PROGRAM ARGS... PORT`, stops the
 * server by its PID and exits with the program's status. The examples that
 * need Redis run under it as tests. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "redis_server.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: with_redis_server PROGRAM [ARGS...]\n");
        return 2;
    }
    rs_server s;
    if (rs_start(&s) != 0) return 1;
    char port[16];
    snprintf(port, sizeof port, "%d", s.port);
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!args) {
        rs_stop(&s);
        return 1;
    }
    for (int i = 1; i < argc; ++i) args[i - 1] = argv[i];
    args[argc - 1] = port;
    fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        execv(args[0], args);
        perror(args[0]);
        _exit(127);
    }
    int status = 1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) status = 1 << 8;
    rs_stop(&s);
    free(args);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    fprintf(stderr, "with_redis_server: %s died of signal %d\n", argv[1], WTERMSIG(status));
    return 1;
}
