package dev.execache.gateway;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * One {@code notifications/tools/list_changed} per burst of changes: servers join one after another as they start and
 * a server tells its changes one tool at a time, but an agent needs one notice to list again, not one per tool. A
 * change starts (or pushes back) a quiet period; the notice goes when it ends, and at the latest {@link #maxDelay}
 * after the burst's first change, so that a server changing without pause still gets heard.
 */
public final class ListChangeNotices {
    public static final Duration QUIET = Duration.ofMillis(150);
    public static final Duration MAX_DELAY = Duration.ofSeconds(1);

    /** Runs a task after a delay; the tests' runs it when they advance their clock. */
    @FunctionalInterface
    public interface Timer {
        void schedule(Runnable task, Duration delay);
    }

    private final Runnable notice;
    private final Duration quiet;
    private final Duration maxDelay;
    private final LongSupplier nanoTime;
    private final Timer timer;
    /** Counts changes: a task scheduled before the latest change finds it moved and leaves the notice to a later one. */
    private long changes;
    /** When the pending burst began (nanoTime); {@code pending} false: none is. */
    private long burstStart;
    private boolean pending;

    public ListChangeNotices(Runnable notice, Duration quiet, Duration maxDelay, LongSupplier nanoTime, Timer timer) {
        this.notice = Objects.requireNonNull(notice, "notice must not be null");
        this.quiet = Objects.requireNonNull(quiet, "quiet must not be null");
        this.maxDelay = Objects.requireNonNull(maxDelay, "maxDelay must not be null");
        if (quiet.isNegative() || maxDelay.compareTo(quiet) < 0) {
            throw new IllegalArgumentException("quiet must not be negative nor maxDelay shorter than quiet: " + quiet
                    + ", " + maxDelay);
        }
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime must not be null");
        this.timer = Objects.requireNonNull(timer, "timer must not be null");
    }

    /** Built on first use: one daemon thread sends every notice of the process, each a few writes. */
    private static final class Notifier {
        static final ScheduledExecutorService EXECUTOR = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "execache-list-changed");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** On the process's notifier thread, with the system's nanosecond clock. */
    public static ListChangeNotices of(Runnable notice) {
        return new ListChangeNotices(notice, QUIET, MAX_DELAY, System::nanoTime, (task, delay) -> {
            ScheduledFuture<?> ignored = Notifier.EXECUTOR.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
        });
    }

    /** Something listed changed: the notice goes once the burst is over. */
    public void changed() {
        long delay;
        long change;
        synchronized (this) {
            long now = nanoTime.getAsLong();
            if (!pending) {
                pending = true;
                burstStart = now;
            }
            change = ++changes;
            long untilMax = burstStart + maxDelay.toNanos() - now;
            delay = Math.max(0, Math.min(quiet.toNanos(), untilMax));
        }
        timer.schedule(() -> fire(change), Duration.ofNanos(delay));
    }

    private void fire(long change) {
        synchronized (this) {
            long now = nanoTime.getAsLong();
            boolean overdue = now - burstStart >= maxDelay.toNanos();
            if (!pending || (change != changes && !overdue)) {
                return;
            }
            pending = false;
        }
        notice.run();
    }
}
