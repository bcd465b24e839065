package dev.execache.store.redis;

import java.net.ConnectException;
import java.util.concurrent.TimeoutException;
import org.redisson.client.RedisException;

/**
 * A store call that Redis did not serve, with a one-line message for people: what happened
 * and to which server, never a credential, a stack of client internals or a script's source.
 * The client's own exception is kept as a suppressed one, for a debugger, not as the cause,
 * so that code printing the cause chain prints only this line. An outage has a JDK exception
 * of the same message as its cause, which says what kind it is to a caller that knows no
 * Redis: a {@link TimeoutException} (Redis did not answer in time) or a {@link ConnectException}
 * (Redis cannot be reached).
 */
final class RedisStoreException extends RedisException {
    RedisStoreException(String message) {
        super(message);
    }

    RedisStoreException(String message, Throwable clientError) {
        super(message);
        if (clientError != null) {
            addSuppressed(clientError);
        }
    }

    private RedisStoreException(String message, Exception kind, Throwable clientError) {
        this(message, clientError);
        if (kind != null) {
            initCause(kind);
        }
    }

    static RedisStoreException timedOut(String message, Throwable clientError) {
        return new RedisStoreException(message, new TimeoutException(message), clientError);
    }

    static RedisStoreException unreachable(String message, Throwable clientError) {
        return new RedisStoreException(message, new ConnectException(message), clientError);
    }

    /** Another failure of the same outage, with its own message. */
    RedisStoreException again(String message) {
        return new RedisStoreException(message, getCause() instanceof Exception kind ? kind : null, null);
    }
}
