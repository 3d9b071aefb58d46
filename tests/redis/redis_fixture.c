/* redis_fixture: the Redis servers of the bindings' Redis tests (JUnit, go
 * test, minitest), started by the C code the C suite uses
 * (redis_server.c), so that every runner gets the same servers the same
 * way and stops them the same way.
 *
 *   redis_fixture [server] [cluster]
 *
 * Starts a redis-server (with `server`) and a three-master Redis Cluster
 * (with `cluster`) on free loopback ports, then prints one line each,
 * "server <port>" and "cluster <port> <port> <port>", then "ready", and
 * reads commands from stdin, one a line, answering each with one line:
 *
 *   kill       kills the server (SIGKILL)              -> "killed"
 *   restart    starts it again on the same port        -> "restarted"
 *   pause      stops it (SIGSTOP)                      -> "paused"
 *   resume     lets it go on (SIGCONT)                 -> "resumed"
 *
 * When stdin closes (the runner exited, or died), it stops every server by
 * its PID, removes their directories and exits 0. Exit status 1: a server
 * did not start (the message on stderr); 2: bad arguments. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "redis_server.h"

static rs_server server;
static rs_cluster cluster;
static int with_server, with_cluster;

static void stop_all(void) {
    if (with_server) rs_stop(&server);
    if (with_cluster) rs_cluster_stop(&cluster);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "server") == 0) {
            with_server = 1;
        } else if (strcmp(argv[i], "cluster") == 0) {
            with_cluster = 1;
        } else {
            fprintf(stderr, "usage: redis_fixture [server] [cluster]\n");
            return 2;
        }
    }
    /* A runner that dies closes our stdin; a write to its closed stdout
     * must not kill us before the servers are stopped. */
    signal(SIGPIPE, SIG_IGN);
    if (with_server && rs_start(&server) != 0) return 1;
    if (with_cluster && rs_cluster_start(&cluster) != 0) {
        if (with_server) rs_stop(&server);
        return 1;
    }
    if (with_server) printf("server %d\n", server.port);
    if (with_cluster) printf("cluster %d %d %d\n", cluster.node[0].port, cluster.node[1].port, cluster.node[2].port);
    printf("ready\n");
    fflush(stdout);

    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        const char *answer = "unknown command";
        if (!with_server && line[0] != '\0') {
            answer = "no server";
        } else if (strcmp(line, "kill") == 0) {
            rs_kill(&server);
            answer = "killed";
        } else if (strcmp(line, "restart") == 0) {
            answer = rs_restart(&server) == 0 ? "restarted" : "restart failed";
        } else if (strcmp(line, "pause") == 0) {
            rs_pause(&server);
            answer = "paused";
        } else if (strcmp(line, "resume") == 0) {
            rs_resume(&server);
            answer = "resumed";
        }
        printf("%s\n", answer);
        fflush(stdout);
    }
    stop_all();
    return 0;
}
