/*
 * Pacing.java - request pacing with a RecencySketch, from Java.
 *
 * An API gateway lets each client through at most once per INTERVAL_MS.
 * Rather than a map of every client it has ever seen, it keeps one fixed-size
 * RecencySketch and asks pace() about every request: the sketch never grants a
 * client twice within the interval, and when it denies it says when to retry.
 *
 * Four simulated clients call at different rates for 1.5 s of simulated time
 * (time is an argument, so the run is deterministic and instant); "patient"
 * always waits until the retry time it was given, so it is never denied.
 *
 * Build and run from a build directory (see bindings/java/meson.build):
 *   ninja -C build java-examples
 *   java -Djava.library.path=build/bindings/java \
 *        -cp build/bindings/java/temporalfilters.jar:build/bindings/java/temporalfilters-examples.jar Pacing
 */
import java.util.ArrayList;
import java.util.List;
import org.temporalfilters.RecencySketch;
import org.temporalfilters.TemporalFilters;
import org.temporalfilters.TemporalFiltersException;

public final class Pacing {
    private static final long INTERVAL_MS = 200;
    private static final long RUN_MS = 1500;
    private static final long PRINT_UNTIL_MS = 450;

    /* A client that sends a request every `every` ms, or, when patient, no
     * sooner than the retry time of its last answer. */
    private static final class Client {
        final String name;
        final long every;
        final boolean patient;
        long nextSend;
        long lastGrant = -1;
        int sent;
        int granted;

        Client(String name, long every, boolean patient, long firstSend) {
            this.name = name;
            this.every = every;
            this.patient = patient;
            this.nextSend = firstSend;
        }
    }

    private Pacing() {
    }

    public static void main(String[] args) {
        List<Client> clients = new ArrayList<>();
        clients.add(new Client("impatient", 30, false, 1)); // ~33 requests/s
        clients.add(new Client("regular", 120, false, 4)); // ~8 requests/s
        clients.add(new Client("patient", 50, true, 7)); // wants 20/s, waits as told
        clients.add(new Client("rare", 350, false, 10)); // slower than the limit

        int violations = 0;
        // Sized for 10 000 clients active within an interval: a client that has
        // waited long enough is wrongly denied with probability <= 0.1%.
        try (RecencySketch sketch = RecencySketch.forTarget(10_000, 0.001, 2024, 0)) {
            System.out.printf("libtemporalfilters %s, Java pacing example%n", TemporalFilters.version());
            System.out.printf("sketch %d x %d cells (%d KiB): one request per client per %d ms%n%n",
                    sketch.info().width(), sketch.info().depth(), sketch.memory() / 1024, INTERVAL_MS);
            System.out.printf("%6s  %-9s  %s%n", "t (ms)", "client", "decision");

            for (long now = 1; now <= RUN_MS; now++) { // 0 means "never": start at 1
                for (Client c : clients) {
                    if (now < c.nextSend) {
                        continue;
                    }
                    RecencySketch.PaceResult r = sketch.pace(c.name, now, INTERVAL_MS);
                    c.sent++;
                    if (r.granted()) {
                        c.granted++;
                        if (c.lastGrant >= 0 && now - c.lastGrant < INTERVAL_MS) {
                            violations++;
                        }
                        c.lastGrant = now;
                    }
                    if (now <= PRINT_UNTIL_MS) {
                        if (r.granted()) {
                            System.out.printf("%6d  %-9s  granted (next allowed at %d)%n", now, c.name, r.nextAllowed());
                        } else {
                            System.out.printf("%6d  %-9s  denied, retry at %d (in %d ms)%n", now, c.name,
                                    r.nextAllowed(), r.nextAllowed() - now);
                        }
                    }
                    c.nextSend = c.patient ? Math.max(now + c.every, r.nextAllowed()) : now + c.every;
                }
                if (now == PRINT_UNTIL_MS) {
                    System.out.printf("   ...  (later decisions are only counted)%n");
                }
            }

            System.out.printf("%nafter %d ms (at most %d grants per client):%n", RUN_MS,
                    (RUN_MS + INTERVAL_MS - 1) / INTERVAL_MS);
            System.out.printf("  %-9s  %4s  %7s  %6s%n", "client", "sent", "granted", "denied");
            for (Client c : clients) {
                System.out.printf("  %-9s  %4d  %7d  %6d%n", c.name, c.sent, c.granted, c.sent - c.granted);
            }
            Client patient = clients.get(2);
            if (patient.granted != patient.sent) {
                System.out.println("the patient client was denied: unexpected");
                violations++;
            }
        } catch (TemporalFiltersException e) {
            System.err.println("pacing: " + e.detail() + " (" + e.statusName() + ")");
            System.exit(1);
        }
        System.out.printf("%ngrants closer than %d ms to the same client's previous grant: %d (must be 0)%n",
                INTERVAL_MS, violations);
        System.exit(violations == 0 ? 0 : 1);
    }
}
