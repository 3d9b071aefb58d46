/* The Redis servers of the redis suites: each started by the test itself
 * (Debian's redis-server) on a free loopback port (never 6379), in a fresh
 * temporary directory, with stdin, stdout and stderr redirected (an
 * inherited pipe would keep meson test waiting), and stopped by its PID. */
#ifndef TF_TESTS_REDIS_SERVER_H
#define TF_TESTS_REDIS_SERVER_H

#include <sys/types.h>

typedef struct {
    pid_t pid;    /* 0 when not running */
    int port;     /* its TCP port on 127.0.0.1 */
    char dir[64]; /* its directory (redis.log, nodes.conf) */
    int cluster;  /* started with --cluster-enabled yes */
} rs_server;

/* A Redis Cluster of three masters (no replicas), each its own server. */
typedef struct {
    rs_server node[3];
    char id[3][48]; /* CLUSTER MYID of each */
} rs_cluster;

/* Starts a server on a free port in a new directory; waits until it
 * accepts connections. Returns 0, or -1 (with a message on stderr). */
int rs_start(rs_server *s);
/* Starts a lone cluster-enabled server (--cluster-enabled yes) that never
 * joined a cluster: no slot is assigned, CLUSTER SLOTS is empty. */
int rs_start_cluster_node(rs_server *s);
/* Starts it again on the same port and directory (after rs_kill). */
int rs_restart(rs_server *s);
/* Kills the server (SIGKILL) and waits for it. */
void rs_kill(rs_server *s);
/* Pauses (SIGSTOP) and resumes (SIGCONT) it. */
void rs_pause(rs_server *s);
void rs_resume(rs_server *s);
/* Kills it and removes its directory. */
void rs_stop(rs_server *s);
/* Starts three cluster-enabled servers on free ports (their bus ports,
 * +10000, free too), joins them with `redis-cli --cluster create` and waits
 * until every node says cluster_state:ok. Returns 0, or -1 (everything
 * started is stopped). */
int rs_cluster_start(rs_cluster *c);
/* Moves `slots` slots from node `from` to node `to` (`redis-cli --cluster
 * reshard`); returns 0 when redis-cli succeeded. */
int rs_cluster_reshard(rs_cluster *c, int from, int to, int slots);
/* The master owning `slot` by node `n`'s CLUSTER SLOTS: 0..2, or -1. */
int rs_cluster_owner(const rs_cluster *c, int n, unsigned slot);
/* Stops every node and removes their directories. */
void rs_cluster_stop(rs_cluster *c);
/* A suite's servers: one single server and one cluster, started by its
 * group setup (0, or -1 with nothing left running) and stopped by its group
 * teardown. */
int rs_suite_start(rs_server *s, rs_cluster *c);
void rs_suite_stop(rs_server *s, rs_cluster *c);
/* A port nothing listens on (bound and released). */
int rs_free_port(void);
/* Milliseconds of a monotonic clock. */
long long rs_now_ms(void);
/* Sleeps for `ms` milliseconds. */
void rs_sleep_ms(long ms);

#endif
