package dev.execache.store.redis;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.redisson.client.RedisAuthRequiredException;
import org.redisson.client.RedisConnectionException;
import org.redisson.client.RedisException;
import org.redisson.client.RedisOutOfMemoryException;
import org.redisson.client.RedisReadonlyException;
import org.redisson.client.RedisResponseTimeoutException;
import org.redisson.client.RedisTimeoutException;
import org.redisson.client.RedisWrongPasswordException;

/**
 * What a failed Redis operation was, told from the client's exception: unreachable, slow, refusing
 * writes, refusing the credentials, or refusing the command; and one line for people about it.
 */
final class RedisFailures {
    private final String server;
    private final Duration timeout;

    RedisFailures(String server, Duration timeout) {
        this.server = server;
        this.timeout = timeout;
    }

    /** The failure as the store reports it: unreachable, timed out, or another refusal, in words. */
    RedisStoreException classify(Throwable error) {
        Throwable e = unwrap(error);
        String because = describe(e);
        return isAuthFailure(e) ? new RedisStoreException(because, e)
                : isTimeout(e) ? RedisStoreException.timedOut(because, e)
                : e instanceof RedisConnectionException || isNetwork(e) ? RedisStoreException.unreachable(because, e)
                : new RedisStoreException(because, e);
    }

    /**
     * Whether the failure is for want of Redis (so the breaker opens) rather than Redis answering:
     * with an error about the command itself, or refusing a write (out of memory under
     * {@code noeviction}, a read-only replica), which leaves reads as they were.
     */
    boolean isOutage(Throwable error) {
        Throwable e = unwrap(error);
        return !(e instanceof RedisException answered) || isOutage(answered);
    }

    private static boolean isTimeout(Throwable e) {
        return e instanceof RedisTimeoutException || e instanceof RedisResponseTimeoutException
                || e instanceof TimeoutException || e.getCause() instanceof TimeoutException;
    }

    /** One line for people, naming the server; never the password, client internals or a script. */
    String describe(Throwable error) {
        Throwable e = unwrap(error);
        String text = String.valueOf(e.getMessage());
        if (isAuthFailure(e)) {
            return "Redis at " + server + " refused the credentials: wrong user name or password"
                    + " (the URL's user info, e.g. redis://user:password@host)";
        }
        if (isTimeout(e)) {
            // the client's own limit, the longest a stalled process may wait (see Budget)
            return "Redis at " + server + " did not answer within " + Budget.longest(timeout).toMillis() + " ms";
        }
        if (e instanceof RedisConnectionException || isNetwork(e)) {
            return "cannot reach Redis at " + server + ": " + networkReason(e);
        }
        String refusal = writeRefusal(e);
        if (refusal != null) {
            return "Redis at " + server + " " + refusal;
        }
        return "Redis at " + server + " failed a command: " + firstLine(text);
    }

    /** What a Redis that refuses writes but still reads says, in words; null for any other error. */
    private static String writeRefusal(Throwable e) {
        String text = String.valueOf(e.getMessage());
        if (e instanceof RedisOutOfMemoryException || text.contains("command not allowed when used memory")) {
            return "is full: maxmemory reached, and its maxmemory-policy evicts nothing it may";
        }
        if (e instanceof RedisReadonlyException || text.startsWith("READONLY") || text.contains("-READONLY")) {
            return "is a read-only replica";
        }
        if (text.startsWith("MISCONF") || text.contains("-MISCONF")) {
            return "cannot save its snapshot to disk (MISCONF), so it takes no writes";
        }
        return null;
    }

    private static boolean isAuthFailure(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            String text = String.valueOf(cause.getMessage());
            if (cause instanceof RedisWrongPasswordException || cause instanceof RedisAuthRequiredException
                    || text.contains("WRONGPASS") || text.contains("NOAUTH") || text.contains("invalid password")
                    || text.contains("invalid username-password")) {
                return true;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    private static boolean isOutage(RedisException e) {
        String text = String.valueOf(e.getMessage());
        return !(text.startsWith("ERR") || text.contains("user_script") || text.startsWith("WRONGTYPE")
                || writeRefusal(e) != null);
    }

    private static boolean isNetwork(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof IOException || cause instanceof RedisConnectionException) {
                return true;
            }
        }
        return false;
    }

    /** The innermost message, e.g. "Connection refused", without client class names. */
    private static String networkReason(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String text = root.getMessage() == null ? "the connection failed" : firstLine(root.getMessage());
        for (String noise : List.of(": /", ". channel:", ".. channel:")) {
            int at = text.indexOf(noise);
            if (at > 0) {
                text = text.substring(0, at);
            }
        }
        return text.toLowerCase(Locale.ROOT);
    }

    private static String firstLine(String text) {
        String line = text.lines().findFirst().orElse("").strip();
        int script = line.indexOf(" script: ");
        if (script > 0) {
            line = line.substring(0, script);
        }
        return line.length() > 200 ? line.substring(0, 200) + "..." : line;
    }

    private static Throwable unwrap(Throwable error) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
