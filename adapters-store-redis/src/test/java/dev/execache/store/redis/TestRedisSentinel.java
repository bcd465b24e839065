package dev.execache.store.redis;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A real Sentinel set on loopback, for one test class: a master, a replica of it, and one
 * Sentinel that monitors the master as {@value #MASTER}; ready once the replica is in sync and
 * the Sentinel has found it. {@link #killMaster()} and {@link #awaitFailover(int)} are a
 * failover as a crashed master brings it about.
 */
final class TestRedisSentinel implements AutoCloseable {
    static final String MASTER = "execache-master";
    private static final Duration DEFAULT_DOWN_AFTER = Duration.ofSeconds(5);

    private final RedisServerProcess master;
    private final RedisServerProcess replica;
    private final RedisServerProcess sentinel;

    private TestRedisSentinel(RedisServerProcess master, RedisServerProcess replica, RedisServerProcess sentinel) {
        this.master = master;
        this.replica = replica;
        this.sentinel = sentinel;
    }

    /** A set whose Sentinel takes the master for down after 5 s without an answer: long enough for a loaded machine. */
    static TestRedisSentinel start() throws IOException, InterruptedException {
        return start(DEFAULT_DOWN_AFTER);
    }

    /** A set whose Sentinel takes the master for down after {@code downAfter} without an answer, then fails over. */
    static TestRedisSentinel start(Duration downAfter) throws IOException, InterruptedException {
        RedisServerProcess master = RedisServerProcess.start();
        RedisServerProcess replica = null;
        RedisServerProcess sentinel = null;
        try {
            replica = RedisServerProcess.start("--replicaof", "127.0.0.1", Integer.toString(master.port()));
            sentinel = RedisServerProcess.startSentinel(String.join("\n",
                    "sentinel monitor " + MASTER + " 127.0.0.1 " + master.port() + " 1",
                    "sentinel down-after-milliseconds " + MASTER + " " + downAfter.toMillis(),
                    "sentinel failover-timeout " + MASTER + " 60000", ""));
            TestRedisSentinel set = new TestRedisSentinel(master, replica, sentinel);
            set.await("the Sentinel set did not become ready", () -> set.isReplicating(set.replica)
                    && set.sentinelNames(set.master.port()) && set.sentinelKnowsAReplica());
            return set;
        } catch (IOException | InterruptedException | RuntimeException e) {
            for (RedisServerProcess process : new RedisServerProcess[] {sentinel, replica, master}) {
                if (process != null) {
                    process.close();
                }
            }
            throw e;
        }
    }

    String url() {
        return "redis-sentinel://127.0.0.1:" + sentinel.port() + "/" + MASTER;
    }

    /** The port of the master the Sentinel names now. */
    int masterPort() throws IOException {
        Object address = Resp.call(sentinel.port(), "SENTINEL", "get-master-addr-by-name", MASTER);
        if (!(address instanceof List<?> hostPort) || hostPort.size() != 2) {
            throw new IOException("the Sentinel names no master: " + address);
        }
        return Integer.parseInt(String.valueOf(hostPort.get(1)));
    }

    /** Until the replica has everything the master has, so that a failover now loses nothing written before. */
    void awaitReplicaInSync() throws IOException, InterruptedException {
        await("the replica did not catch up with the master", () -> {
            long written = offset(Resp.text(master.port(), "INFO", "replication"), "master_repl_offset:");
            long copied = offset(Resp.text(replica.port(), "INFO", "replication"), "slave_repl_offset:");
            return copied >= written;
        });
    }

    /** Kills the master at once (SIGKILL), as a crash would, and returns its port. */
    int killMaster() {
        master.kill();
        return master.port();
    }

    /**
     * Until the Sentinel has promoted the replica: it names another master than the dead one,
     * and that server says it is a master.
     */
    void awaitFailover(int deadMaster) throws IOException, InterruptedException {
        await("the Sentinel did not promote the replica", () -> hasFailedOver(deadMaster));
    }

    /** Whether the Sentinel names another master than the dead one, and that server says it is a master. */
    boolean hasFailedOver(int deadMaster) {
        return holds(() -> masterPort() != deadMaster && Resp.text(masterPort(), "INFO", "replication").contains("role:master"));
    }

    private boolean isReplicating(RedisServerProcess server) throws IOException {
        return Resp.text(server.port(), "INFO", "replication").contains("master_link_status:up");
    }

    private boolean sentinelNames(int port) throws IOException {
        return masterPort() == port;
    }

    private boolean sentinelKnowsAReplica() throws IOException {
        return Resp.call(sentinel.port(), "SENTINEL", "replicas", MASTER) instanceof List<?> found && !found.isEmpty();
    }

    private static long offset(String info, String field) throws IOException {
        return info.lines().filter(line -> line.startsWith(field)).map(line -> Long.parseLong(line.substring(field.length()).strip()))
                .findFirst().orElseThrow(() -> new IOException("no " + field + " in " + info));
    }

    private interface Condition {
        boolean holds() throws IOException;
    }

    /** A limit only so that a set that never gets there fails the test rather than hanging it. */
    private void await(String failure, Condition condition) throws IOException, InterruptedException {
        try {
            Awaitility.await().alias(failure).atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                    .until(() -> holds(condition));
        } catch (ConditionTimeoutException e) {
            throw new IOException(failure + ": the Sentinel says " + Resp.call(sentinel.port(), "SENTINEL", "master", MASTER), e);
        }
    }

    /** A server that is down or just starting does not hold the condition yet. */
    private static boolean holds(Condition condition) {
        try {
            return condition.holds();
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() {
        sentinel.close();
        replica.close();
        master.close();
    }
}
