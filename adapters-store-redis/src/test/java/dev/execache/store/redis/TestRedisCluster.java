package dev.execache.store.redis;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A real Redis Cluster of three masters (or as many as asked) on loopback, for one test class: the
 * cluster nodes, the 16384 slots split evenly between them in node order, each told of the others (what {@code redis-cli --cluster
 * create} does), ready once every node says the cluster is ok.
 */
public final class TestRedisCluster implements AutoCloseable {
    private static final int SLOTS = 16384;
    private final List<RedisServerProcess> nodes = new ArrayList<>();

    public static TestRedisCluster start() throws IOException, InterruptedException {
        return start(new String[0]);
    }

    /** With these redis-server options on every node, e.g. {@code --cluster-require-full-coverage no}. */
    public static TestRedisCluster start(String... nodeOptions) throws IOException, InterruptedException {
        return start(3, nodeOptions);
    }

    /** A Cluster of this many masters, the slots split evenly between them in node order. */
    public static TestRedisCluster start(int masters, String... nodeOptions) throws IOException, InterruptedException {
        TestRedisCluster cluster = new TestRedisCluster();
        try {
            for (int i = 0; i < masters; i++) {
                cluster.nodes.add(RedisServerProcess.startClusterNode(nodeOptions));
            }
            cluster.form();
            return cluster;
        } catch (IOException | InterruptedException | RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    private void form() throws IOException, InterruptedException {
        for (int i = 0; i < nodes.size(); i++) {
            int from = SLOTS * i / nodes.size();
            int to = SLOTS * (i + 1) / nodes.size();
            List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
            for (int slot = from; slot < to; slot++) {
                command.add(Integer.toString(slot));
            }
            Resp.call(nodes.get(i).port(), command.toArray(String[]::new));
        }
        for (int i = 1; i < nodes.size(); i++) {
            Resp.call(nodes.get(0).port(), "CLUSTER", "MEET", "127.0.0.1", Integer.toString(nodes.get(i).port()));
        }
        try {
            Awaitility.await("the cluster ok").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                    .ignoreExceptionsInstanceOf(IOException.class).until(this::ready);
        } catch (ConditionTimeoutException e) {
            throw new IOException("the cluster did not become ok: " + Resp.text(nodes.get(0).port(), "CLUSTER", "INFO"), e);
        }
    }

    /** Every node knows all three and has every slot covered. */
    private boolean ready() throws IOException {
        for (RedisServerProcess node : nodes) {
            String info = Resp.text(node.port(), "CLUSTER", "INFO");
            if (!info.contains("cluster_state:ok") || !info.contains("cluster_known_nodes:" + nodes.size())
                    || !info.contains("cluster_slots_ok:" + SLOTS)) {
                return false;
            }
        }
        return true;
    }

    public String url() {
        return "redis-cluster://" + nodes.stream().map(node -> "127.0.0.1:" + node.port()).collect(Collectors.joining(","));
    }

    /** How many keys each master holds, in node order. */
    public List<Long> keysPerNode() throws IOException {
        List<Long> counts = new ArrayList<>();
        for (RedisServerProcess node : nodes) {
            counts.add((Long) Resp.call(node.port(), "DBSIZE"));
        }
        return counts;
    }

    /** How many keys matching the SCAN pattern each master holds itself, in node order. */
    public List<Long> keysPerNode(String pattern) throws IOException {
        List<Long> counts = new ArrayList<>();
        for (RedisServerProcess node : nodes) {
            long count = 0;
            String cursor = "0";
            do {
                List<?> page = (List<?>) Resp.call(node.port(), "SCAN", cursor, "MATCH", pattern, "COUNT", "1000");
                count += ((List<?>) page.get(1)).size();
                cursor = (String) page.get(0);
            } while (!cursor.equals("0"));
            counts.add(count);
        }
        return counts;
    }

    /** The slot Redis itself gives a key. */
    public long slotOf(String key) throws IOException {
        return (Long) Resp.call(nodes.get(0).port(), "CLUSTER", "KEYSLOT", key);
    }

    /** The node that owns a slot: the slots are split evenly, in node order. */
    public int nodeOfSlot(int slot) {
        int node = 0;
        while (slot >= SLOTS * (node + 1) / nodes.size()) {
            node++;
        }
        return node;
    }

    /** The CPU time (user and system, in seconds) each master has used so far, in node order. */
    public List<Double> cpuSecondsPerNode() throws IOException {
        List<Double> seconds = new ArrayList<>();
        for (RedisServerProcess node : nodes) {
            double used = 0;
            for (String line : Resp.text(node.port(), "INFO", "cpu").lines().toList()) {
                if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
                    used += Double.parseDouble(line.substring(line.indexOf(':') + 1).strip());
                }
            }
            seconds.add(used);
        }
        return seconds;
    }

    /** Kills one master at once (SIGKILL), as a crash would. */
    public void kill(int node) {
        nodes.get(node).kill();
    }

    /**
     * The key's time to live in milliseconds on each master, in node order: -2 where it is not,
     * -1 where it has none. Each node is asked what it holds itself (a node answers a command
     * for another node's key with a redirection).
     */
    public List<Long> millisLeftPerNode(String key) throws IOException {
        List<Long> left = new ArrayList<>();
        for (RedisServerProcess node : nodes) {
            left.add(holds(node, key) ? (Long) Resp.call(node.port(), "PTTL", key) : -2L);
        }
        return left;
    }

    private static boolean holds(RedisServerProcess node, String key) throws IOException {
        String pattern = key.replaceAll("([\\[\\]*?\\\\])", "\\\\$1");
        String cursor = "0";
        do {
            List<?> page = (List<?>) Resp.call(node.port(), "SCAN", cursor, "MATCH", pattern, "COUNT", "1000");
            if (!((List<?>) page.get(1)).isEmpty()) {
                return true;
            }
            cursor = (String) page.get(0);
        } while (!cursor.equals("0"));
        return false;
    }

    @Override
    public void close() {
        nodes.forEach(RedisServerProcess::close);
    }
}
