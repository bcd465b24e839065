package dev.execache.store.redis;

import java.io.IOException;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;

/**
 * The Redis that tests share, one per test run: the server named by the environment variable
 * {@value #URL_VARIABLE} if it is set (and nothing else of the user's is touched), else a
 * {@link RedisServerProcess} started here and stopped when the run ends. Tests keep apart by
 * key prefix, see {@link #freshPrefix()}.
 *
 * <p>Use with {@code @ExtendWith(TestRedis.class)} and a {@code TestRedis} parameter.
 */
final class TestRedis implements ParameterResolver {
    static final String URL_VARIABLE = "EXECACHE_TEST_REDIS_URL";
    /**
     * The budget per operation of stores in tests of behaviour (the contract): a loaded CI machine
     * can starve a client or the server past the default 2 s, which is a store error by design
     * (tested in RedisFaultTest), not a broken rule of the contract.
     */
    static final Duration BEHAVIOUR_TIMEOUT = Duration.ofSeconds(30);

    private final String url;
    private final RedisServerProcess process;

    private TestRedis(String url, RedisServerProcess process) {
        this.url = url;
        this.process = process;
    }

    /** For JUnit's extension registration only. */
    TestRedis() {
        this(null, null);
    }

    String url() {
        return url;
    }

    /** A plain client on this server, for a test to look at what a store wrote; the caller shuts it down. */
    RedissonClient client() {
        return client(url);
    }

    /**
     * The tests' own client waits longer than a store's default second: on a loaded CI machine
     * connecting can take longer, and this client only looks at what a store wrote.
     */
    static RedissonClient client(String url) {
        return Redisson.create(RedissonConfig.of(RedisUrl.parse(url), Duration.ofSeconds(10)));
    }

    /** A prefix no other test uses, so that a store on it starts empty. */
    static String freshPrefix() {
        return "test-" + UUID.randomUUID() + ":";
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == TestRedis.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return context.getRoot().getStore(ExtensionContext.Namespace.create(TestRedis.class))
                .getOrComputeIfAbsent(TestRedis.class, unused -> startShared(), Shared.class).redis;
    }

    private static Shared startShared() {
        String named = System.getenv(URL_VARIABLE);
        if (named != null && !named.isBlank()) {
            return new Shared(new TestRedis(named, null));
        }
        try {
            RedisServerProcess process = RedisServerProcess.start();
            return new Shared(new TestRedis(process.url(), process));
        } catch (IOException e) {
            throw new IllegalStateException("cannot start a redis-server for the tests", e);
        }
    }

    /** Closed by JUnit when the run ends. */
    private record Shared(TestRedis redis) implements AutoCloseable {
        @Override
        public void close() {
            if (redis.process != null) {
                redis.process.close();
            }
        }
    }
}
