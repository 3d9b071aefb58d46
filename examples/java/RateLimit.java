/*
 * RateLimit.java - an HTTP-style rate limiter with a RateLimiter, from Java.
 *
 * An API lets each client make at most 5 requests per second, the API as a
 * whole at most 20 per second; the "partner" client has its own limit of 50
 * per second but is still held to the API's 20. Every request asks the
 * limiter (exact mode: never more than the limit in any second); a denied
 * request gets "429 Too Many Requests" with a Retry-After header (whole
 * seconds, rounded up, as HTTP wants them) and X-RateLimit-Remaining. A
 * request costing more permits than a client may ever have gets a 429 without
 * Retry-After. With the API's limit every decision asks both windows, so a
 * 429 reports the fewer permits remaining and the later retry time of the
 * client's and the API's. Halfway through, the server "restarts": the
 * limiter's state is serialized and read back, every client gets the same
 * answer as before (those that were limited stay limited), and the limiter
 * read back writes the very same bytes (peeks change nothing, and equal
 * states give equal blobs).
 *
 * Time is simulated in milliseconds (it is an argument of every call), so the
 * run is deterministic and instant. At the end the program checks, from its
 * own log, that no client and not the API as a whole got more than its limit
 * in any 1000 ms window, and exits 1 if one did (or if the restart changed an
 * answer or the state).
 *
 * Build and run from a build directory (see bindings/java/meson.build):
 *   ninja -C build java-examples
 *   java -Djava.library.path=build/bindings/java \
 *        -cp build/bindings/java/temporalfilters.jar:build/bindings/java/temporalfilters-examples.jar RateLimit
 */
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.temporalfilters.RateLimiter;
import org.temporalfilters.TemporalFilters;
import org.temporalfilters.TemporalFiltersException;

public final class RateLimit {
    private static final long WINDOW_MS = 1000;
    private static final long PER_CLIENT = 5;
    private static final long PER_API = 20;
    private static final long PARTNER = 50;
    private static final long RUN_MS = 3000;
    private static final long RESTART_AT_MS = 1600;
    private static final long PRINT_UNTIL_MS = 1100;

    /* A client that sends a request costing `cost` permits every `every` ms. */
    private static final class Client {
        final String name;
        final long every;
        final long cost;
        final long limit;
        long nextSend;
        int sent;
        int ok;
        final List<Long> granted = new ArrayList<>(); // one entry per permit

        Client(String name, long every, long cost, long limit, long firstSend) {
            this.name = name;
            this.every = every;
            this.cost = cost;
            this.limit = limit;
            this.nextSend = firstSend;
        }
    }

    private RateLimit() {
    }

    /* The most entries of `times` (ascending) within any window. */
    private static int maxInWindow(List<Long> times) {
        int most = 0;
        for (int from = 0, to = 0; to < times.size(); to++) {
            while (times.get(from) <= times.get(to) - WINDOW_MS) {
                from++;
            }
            most = Math.max(most, to - from + 1);
        }
        return most;
    }

    private static RateLimiter newLimiter() {
        // Keys come from clients: a random secret seed, so that nobody can
        // choose keys that crowd one shard (the decisions do not depend on it).
        long seed = new SecureRandom().nextInt() & 0xFFFF_FFFFL;
        RateLimiter rl = new RateLimiter(PER_CLIENT, WINDOW_MS, 0, seed, RateLimiter.EXACT);
        rl.setGlobalLimit(PER_API);
        rl.setKeyLimit("partner", PARTNER);
        return rl;
    }

    public static void main(String[] args) {
        Map<String, Client> clients = new LinkedHashMap<>();
        for (Client c : new Client[] {
            new Client("alice", 120, 1, PER_CLIENT, 1), // ~8 requests/s: limited
            new Client("bob", 400, 1, PER_CLIENT, 3), // 2.5/s: within its limit
            new Client("partner", 40, 1, PARTNER, 5), // 25/s: above the API's limit
            new Client("uploader", 500, 3, PER_CLIENT, 7), // 3 permits a request
        }) {
            clients.put(c.name, c);
        }
        List<Long> api = new ArrayList<>();
        int violations = 0;
        RateLimiter rl = newLimiter();
        try {
            System.out.printf("libtemporalfilters %s, Java rate limiter example%n", TemporalFilters.version());
            System.out.printf("%d requests/s per client (partner: %d), %d/s for the whole API; exact mode%n%n",
                    PER_CLIENT, PARTNER, PER_API);
            System.out.printf("%6s  %-8s  %s%n", "t (ms)", "client", "response (429s only)");
            for (long now = 1; now <= RUN_MS; now++) { // 0 means "never": start at 1
                if (now == RESTART_AT_MS) {
                    // what the server would answer now, before and after the restart
                    Map<String, RateLimiter.Decision> before = new LinkedHashMap<>();
                    for (String name : clients.keySet()) {
                        before.put(name, rl.peek(name, now));
                    }
                    byte[] state = rl.serialize();
                    rl.close();
                    rl = RateLimiter.deserialize(state);
                    StringBuilder limited = new StringBuilder();
                    for (String name : clients.keySet()) {
                        RateLimiter.Decision d = rl.peek(name, now);
                        violations += d.equals(before.get(name)) ? 0 : 1;
                        if (!d.allowed()) {
                            limited.append(limited.length() == 0 ? "" : ", ").append(name).append(" until ")
                                    .append(d.retryAt());
                        }
                    }
                    boolean same = Arrays.equals(state, rl.serialize());
                    violations += same ? 0 : 1;
                    System.out.printf("%6d  -- restart: %d bytes of state read back%s; still limited: %s --%n", now,
                            state.length, same ? " (written back identical)" : " AND CHANGED",
                            limited.length() == 0 ? "nobody" : limited);
                }
                for (Client c : clients.values()) {
                    if (now < c.nextSend) {
                        continue;
                    }
                    c.nextSend = now + c.every;
                    c.sent++;
                    long cost = c.name.equals("uploader") && c.sent == 3 ? 8 : c.cost; // one oversized upload
                    RateLimiter.Decision d = rl.acquire(c.name, now, cost);
                    if (d.allowed()) {
                        c.ok++;
                        for (long i = 0; i < cost; i++) {
                            c.granted.add(now);
                            api.add(now);
                        }
                        continue;
                    }
                    if (now > PRINT_UNTIL_MS) {
                        continue;
                    }
                    if (d.retryAt() == TemporalFilters.RETRY_NEVER) {
                        System.out.printf("%6d  %-8s  429 Too Many Requests (costs %d permits, more than a "
                                + "window allows: no Retry-After)%n", now, c.name, cost);
                    } else {
                        long waitMs = d.retryAfter(now);
                        long header = (waitMs + 999) / 1000; // Retry-After is in whole seconds
                        System.out.printf("%6d  %-8s  429 Too Many Requests, Retry-After: %d, "
                                + "X-RateLimit-Remaining: %d  (allowed again at %d, in %d ms)%n", now, c.name,
                                header, d.remaining(), d.retryAt(), waitMs);
                    }
                }
                if (now == PRINT_UNTIL_MS) {
                    System.out.printf("   ...  (later decisions are only counted)%n");
                }
            }

            RateLimiter.Stats s = rl.stats();
            System.out.printf("%nafter %d ms: %d clients tracked, %d bytes of native memory%n", RUN_MS, s.keys(),
                    rl.memory());
            System.out.printf("  %-8s  %4s  %4s  %4s  %s%n", "client", "sent", "200", "429", "most permits in 1 s");
            for (Client c : clients.values()) {
                int most = maxInWindow(c.granted);
                System.out.printf("  %-8s  %4d  %4d  %4d  %d (limit %d)%n", c.name, c.sent, c.ok, c.sent - c.ok,
                        most, c.limit);
                violations += most > c.limit ? 1 : 0;
            }
            api.sort(null);
            int mostApi = maxInWindow(api);
            System.out.printf("  %-8s  %4s  %4s  %4s  %d (limit %d)%n", "API", "", "", "", mostApi, PER_API);
            violations += mostApi > PER_API ? 1 : 0;
            if (clients.get("bob").ok != clients.get("bob").sent) {
                System.out.println("bob, within his limit, was refused: only when the API as a whole was full");
            }
        } catch (TemporalFiltersException e) {
            System.err.println("rate limit: " + e.detail() + " (" + e.statusName() + ")");
            System.exit(1);
        } finally {
            rl.close();
        }
        System.out.printf("%nwindows over a limit, answers or state changed by the restart: %d (must be 0)%n",
                violations);
        System.exit(violations == 0 ? 0 : 1);
    }
}
