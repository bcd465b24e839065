package dev.execache.store.redis;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real Sentinel set on loopback, for one test class: a master, a replica of it, and one
 * Sentinel that monitors the master as {@value #MASTER}; ready once the replica is in sync and
 * the Sentinel has found it.
 */
final class TestRedisSentinel implements AutoCloseable {
    static final String MASTER = "execache-master";

    private final RedisServerProcess master;
    private final RedisServerProcess replica;
    private final RedisServerProcess sentinel;

    private TestRedisSentinel(RedisServerProcess master, RedisServerProcess replica, RedisServerProcess sentinel) {
        this.master = master;
        this.replica = replica;
        this.sentinel = sentinel;
    }

    static TestRedisSentinel start() throws IOException, InterruptedException {
        RedisServerProcess master = RedisServerProcess.start();
        RedisServerProcess replica = null;
        RedisServerProcess sentinel = null;
        try {
            replica = RedisServerProcess.start("--replicaof", "127.0.0.1", Integer.toString(master.port()));
            sentinel = RedisServerProcess.startSentinel(String.join("\n",
                    "sentinel monitor " + MASTER + " 127.0.0.1 " + master.port() + " 1",
                    "sentinel down-after-milliseconds " + MASTER + " 5000",
                    "sentinel failover-timeout " + MASTER + " 60000", ""));
            TestRedisSentinel set = new TestRedisSentinel(master, replica, sentinel);
            set.awaitReady();
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

    private void awaitReady() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!ready()) {
            if (System.nanoTime() > deadline) {
                throw new IOException("the Sentinel set did not become ready: "
                        + Resp.text(replica.port(), "INFO", "replication"));
            }
            Thread.sleep(50);
        }
    }

    private boolean ready() throws IOException {
        if (!Resp.text(replica.port(), "INFO", "replication").contains("master_link_status:up")) {
            return false;
        }
        Object address = Resp.call(sentinel.port(), "SENTINEL", "get-master-addr-by-name", MASTER);
        Object replicas = Resp.call(sentinel.port(), "SENTINEL", "replicas", MASTER);
        return address instanceof List<?> hostPort && hostPort.size() == 2
                && String.valueOf(hostPort.get(1)).equals(Integer.toString(master.port()))
                && replicas instanceof List<?> found && !found.isEmpty();
    }

    String url() {
        return "redis-sentinel://127.0.0.1:" + sentinel.port() + "/" + MASTER;
    }

    int masterPort() {
        return master.port();
    }

    @Override
    public void close() {
        sentinel.close();
        replica.close();
        master.close();
    }
}
