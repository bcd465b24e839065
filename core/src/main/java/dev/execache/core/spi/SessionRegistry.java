package dev.execache.core.spi;

import java.time.Clock;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The sessions of execache's MCP HTTP service (2025-11-25 era) that a store knows, behind
 * {@link CacheStore#sessions()}: fleet-wide on a shared store, so that a session one instance opened is
 * served by every instance, and one ended (or left unused past its limit) anywhere is gone everywhere. A
 * session is an id and its owner: a digest the caller makes of who began it, never a credential.
 * Every rule here is a test in {@code CacheStoreContract}.
 */
public interface SessionRegistry {

    /** Records a new session of {@code owner}, gone once unused for {@code idleLimit}. */
    void open(String id, String owner, Duration idleLimit);

    /**
     * The owner of session {@code id}, whose idle limit starts again now; empty when no session of that id
     * is open: never opened, ended, or unused for longer than its limit.
     */
    Optional<String> use(String id, Duration idleLimit);

    /** Ends session {@code id}; false when none of that id was open. */
    boolean end(String id);

    /**
     * Sessions kept in this process, for a store that lives in one process: at most {@code bound} (the
     * least recently used goes first), each gone once unused past its limit by {@code clock}.
     */
    static SessionRegistry inProcess(Clock clock, int bound) {
        Objects.requireNonNull(clock, "clock must not be null");
        if (bound < 1) {
            throw new IllegalArgumentException("bound must be at least 1: " + bound);
        }
        record Open(String owner, long expiresAt) {
        }
        Map<String, Open> sessions = new LinkedHashMap<>(16, 0.75f, true);
        return new SessionRegistry() {
            @Override
            public synchronized void open(String id, String owner, Duration idleLimit) {
                long now = clock.millis();
                for (Iterator<Open> each = sessions.values().iterator(); each.hasNext(); ) {
                    Open session = each.next();
                    if (session.expiresAt() <= now || sessions.size() >= bound) {
                        each.remove();
                    } else {
                        break;
                    }
                }
                sessions.put(id, new Open(owner, now + idleLimit.toMillis()));
            }

            @Override
            public synchronized Optional<String> use(String id, Duration idleLimit) {
                long now = clock.millis();
                Open session = sessions.get(id);
                if (session == null || session.expiresAt() <= now) {
                    sessions.remove(id);
                    return Optional.empty();
                }
                sessions.put(id, new Open(session.owner(), now + idleLimit.toMillis()));
                return Optional.of(session.owner());
            }

            @Override
            public synchronized boolean end(String id) {
                Open session = sessions.remove(id);
                return session != null && session.expiresAt() > clock.millis();
            }
        };
    }
}
