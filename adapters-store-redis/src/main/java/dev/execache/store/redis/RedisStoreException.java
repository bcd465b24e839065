package dev.execache.store.redis;

import org.redisson.client.RedisException;

/**
 * A store call that Redis did not serve, with a one-line message for people: what happened
 * and to which server, never a credential, a stack of client internals or a script's source.
 * The client's own exception is kept as a suppressed one, for a debugger, not as the cause,
 * so that code printing the cause chain prints only this line.
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
}
