package dev.execache.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** A clock the test moves, and the tasks due by then run as it moves: {@link ListChangeNotices} without waiting. */
final class ManualTimer implements ListChangeNotices.Timer {
    private record Task(long due, long order, Runnable run) {
    }

    long now;
    private long order;
    private final List<Task> tasks = new ArrayList<>();

    @Override
    public synchronized void schedule(Runnable task, Duration delay) {
        tasks.add(new Task(now + delay.toNanos(), order++, task));
    }

    void advance(Duration by) {
        long until = now + by.toNanos();
        while (true) {
            Task next;
            synchronized (this) {
                next = tasks.stream().filter(task -> task.due() <= until)
                        .min(Comparator.comparingLong(Task::due).thenComparingLong(Task::order)).orElse(null);
                if (next == null) {
                    break;
                }
                tasks.remove(next);
                now = Math.max(now, next.due());
            }
            next.run().run();
        }
        now = until;
    }

    /** Notices over this timer with serve's quiet period and maximum delay. */
    ListChangeNotices notices(Runnable notice) {
        return new ListChangeNotices(notice, ListChangeNotices.QUIET, ListChangeNotices.MAX_DELAY, () -> now, this);
    }
}
