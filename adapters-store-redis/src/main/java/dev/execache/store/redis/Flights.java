package dev.execache.store.redis;

import dev.execache.core.spi.FlightLease;
import dev.execache.store.redis.KeyLayout.Partition;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * The fleet's flights: one key per flight, in the partition of the key it is for, holding its
 * holder's random token with {@link #LEASE} as its TTL, renewed by the holder while it runs.
 */
final class Flights implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RedisCacheStore.class.getName());

    /**
     * How long a flight lapses after its holder stops renewing it (it died, or lost Redis): the
     * holder renews it every third of that for as long as it runs, so a live holder keeps it
     * whatever the run's timeout, and a dead one blocks the fleet for no more than this.
     */
    static final Duration LEASE = Duration.ofSeconds(6);

    /** How soon a waiter first asks again whether the flight is free; it then waits twice as long each time. */
    static final Duration FIRST_POLL = Duration.ofMillis(20);
    static final Duration MAX_POLL = Duration.ofMillis(250);

    private final RedisCalls calls;
    /** Renews the flights this process holds; stopped on close, so they lapse as a dead holder's do. */
    private final ScheduledExecutorService renewals;

    Flights(RedisCalls calls) {
        this.calls = calls;
        ScheduledThreadPoolExecutor renewing = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "execache-redis-flights");
            thread.setDaemon(true);
            return thread;
        });
        renewing.setRemoveOnCancelPolicy(true);
        this.renewals = renewing;
    }

    /**
     * Takes the fleet-wide flight of {@code key} in its partition: set only if absent. A waiter
     * asks again after 20 ms, then less often, up to every 250 ms, for as long as a live holder
     * may run ({@code maxHold}) plus one lease, then gives up and gets {@link FlightLease#LOCAL}.
     * Each ask is one short command under the same budget and breaker as every other operation;
     * nothing waits on a subscription. (Redisson's {@code RLock} waits on pub/sub: on a loaded
     * machine its subscriptions timed out, the waiter ran the code itself, and the timeout stopped
     * the whole process from using Redis for a while.)
     */
    FlightLease acquire(Partition partition, String key, Duration maxHold) throws InterruptedException {
        String flight = partition.flight(key);
        String token = UUID.randomUUID().toString();
        long waitNanos = maxHold.plus(LEASE).toNanos();
        long start = System.nanoTime();
        long pause = FIRST_POLL.toNanos();
        while (!Boolean.TRUE.equals(calls.await(partition, () -> calls.redisson().<String>getBucket(flight, StringCodec.INSTANCE)
                .setIfAbsentAsync(token, LEASE)))) {
            if (System.nanoTime() - start >= waitNanos) {
                LOG.log(System.Logger.Level.WARNING, "waited " + TimeUnit.NANOSECONDS.toSeconds(waitNanos)
                        + " s for another instance's run of " + key + " (it still holds the flight in Redis at "
                        + calls.server() + "): running it here as well");
                return FlightLease.LOCAL;
            }
            TimeUnit.NANOSECONDS.sleep(pause);
            pause = Math.min(2 * pause, MAX_POLL.toNanos());
        }
        return new HeldFlight(flight, token);
    }

    @Override
    public void close() {
        renewals.shutdownNow();
    }

    /** A flight this process holds: renewed every third of the lease until closed, from any thread. */
    private final class HeldFlight implements FlightLease {
        private final String flight;
        private final String token;
        private final ScheduledFuture<?> renewal;
        private final AtomicBoolean released = new AtomicBoolean();

        HeldFlight(String flight, String token) {
            this.flight = flight;
            this.token = token;
            long third = LEASE.toMillis() / 3;
            this.renewal = renewals.scheduleAtFixedRate(this::renew, third, third, TimeUnit.MILLISECONDS);
        }

        /** Sent without waiting: a renewal that fails is tried again a third of a lease later. */
        private void renew() {
            try {
                flightScript(Scripts.RENEW_FLIGHT, Long.toString(LEASE.toMillis())).whenComplete((renewed, error) -> {
                    if (error == null && renewed == 0) {
                        renewal.cancel(false);
                        LOG.log(System.Logger.Level.DEBUG, () -> "flight " + flight + " lapsed before its holder ended");
                    }
                });
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, () -> "flight " + flight + " not renewed: " + e.getMessage());
            }
        }

        private CompletableFuture<Long> flightScript(String lua, String... extra) {
            Object[] values = new Object[1 + extra.length];
            values[0] = token;
            System.arraycopy(extra, 0, values, 1, extra.length);
            return calls.script().<Long>evalAsync(RScript.Mode.READ_WRITE, lua, RScript.ReturnType.LONG, List.of(flight), values)
                    .toCompletableFuture();
        }

        @Override
        public void close() {
            if (!released.compareAndSet(false, true)) {
                return;
            }
            renewal.cancel(false);
            try {
                Budget.await(flightScript(Scripts.RELEASE_FLIGHT), calls.timeout());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException | RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, () -> "flight " + flight + " not released (it lapses within "
                        + LEASE.toSeconds() + " s): " + e.getMessage());
            }
        }
    }
}
