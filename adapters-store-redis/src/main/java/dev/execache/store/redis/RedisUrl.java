package dev.execache.store.redis;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A parsed Redis URL, one of:
 * <ul>
 *   <li>{@code redis://[[user:]password@]host[:port][/database]}: one server;
 *   <li>{@code redis-sentinel://[[user:]password@]host[:port][,host[:port]...]/master[/database]}: the
 *       master that these Sentinels name {@code master}, found again after a failover;
 *   <li>{@code redis-cluster://[[user:]password@]host[:port][,host[:port]...]}: a Redis Cluster, found
 *       through any of these nodes (a Cluster has database 0 only).
 * </ul>
 * Each with {@code rediss} in place of {@code redis} for TLS. A user info without a colon is a
 * password, as in Lettuce; the credentials are those of the data nodes (Sentinels are reached
 * without). {@link #toString()} never shows the credentials, so a URL can go into a message or a
 * log as it is.
 *
 * @param nodes {@code host:port} of the server, the Sentinels, or the Cluster nodes
 */
record RedisUrl(Topology topology, boolean tls, List<String> nodes, String master, String username, String password,
        int database) {
    static final int DEFAULT_PORT = 6379;
    static final int DEFAULT_SENTINEL_PORT = 26379;
    private static final String SHAPE = "redis://[[user:]password@]host[:port][/database],"
            + " redis-sentinel://[[user:]password@]host[:port][,host[:port]...]/master[/database],"
            + " redis-cluster://[[user:]password@]host[:port][,host[:port]...], or rediss... for TLS";

    enum Topology { STANDALONE, SENTINEL, CLUSTER }

    RedisUrl {
        nodes = List.copyOf(nodes);
    }

    static RedisUrl parse(String url) {
        if (url == null || url.isBlank()) {
            throw new IllegalArgumentException("Redis URL must not be blank; expected " + SHAPE);
        }
        String text = url.strip();
        int schemeEnd = text.indexOf("://");
        if (schemeEnd < 0) {
            throw malformed(url, "it is not a URL (no scheme://)");
        }
        String scheme = text.substring(0, schemeEnd).toLowerCase(Locale.ROOT);
        boolean tls = scheme.startsWith("rediss");
        Topology topology = switch (scheme) {
            case "redis", "rediss" -> Topology.STANDALONE;
            case "redis-sentinel", "rediss-sentinel" -> Topology.SENTINEL;
            case "redis-cluster", "rediss-cluster" -> Topology.CLUSTER;
            default -> throw malformed(url, "the scheme must be redis, redis-sentinel or redis-cluster (rediss... for TLS)");
        };
        String rest = text.substring(schemeEnd + 3);
        if (rest.contains("?") || rest.contains("#")) {
            throw malformed(url, "it has a query or fragment, which execache does not read");
        }
        int slash = rest.indexOf('/');
        String authority = slash < 0 ? rest : rest.substring(0, slash);
        String path = slash < 0 ? "" : rest.substring(slash);
        int at = authority.lastIndexOf('@');
        String userInfo = at < 0 ? null : authority.substring(0, at);
        String hosts = authority.substring(at + 1);
        if (hosts.isEmpty()) {
            throw malformed(url, "it names no host");
        }
        int defaultPort = topology == Topology.SENTINEL ? DEFAULT_SENTINEL_PORT : DEFAULT_PORT;
        List<String> nodes = new ArrayList<>();
        for (String host : hosts.split(",", -1)) {
            nodes.add(node(url, host, defaultPort));
        }
        if (topology == Topology.STANDALONE && nodes.size() > 1) {
            throw malformed(url, "redis:// names one server; use redis-sentinel:// or redis-cluster:// for several");
        }
        String username = null;
        String password = null;
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            if (colon < 0) {
                password = decode(userInfo);
            } else {
                username = colon == 0 ? null : decode(userInfo.substring(0, colon));
                password = decode(userInfo.substring(colon + 1));
            }
            if (password != null && password.isEmpty()) {
                password = null;
            }
        }
        String master = null;
        int database;
        switch (topology) {
            case SENTINEL -> {
                String[] parts = path.isEmpty() ? new String[0] : path.substring(1).split("/", -1);
                if (parts.length == 0 || parts[0].isEmpty()) {
                    throw malformed(url, "it names no master: add /NAME, the name the Sentinels know the master by");
                }
                if (parts.length > 2) {
                    throw malformed(url, "the path must be /master or /master/database, not " + path);
                }
                master = URLDecoder.decode(parts[0], StandardCharsets.UTF_8);
                database = parts.length == 2 ? database(url, "/" + parts[1]) : 0;
            }
            case CLUSTER -> {
                if (!path.isEmpty() && !path.equals("/")) {
                    throw malformed(url, "a Redis Cluster has database 0 only; remove " + path);
                }
                database = 0;
            }
            default -> database = database(url, path);
        }
        return new RedisUrl(topology, tls, nodes, master, username, password, database);
    }

    /** One server at {@code host:port}, as the tests and the simplest setups name it. */
    static RedisUrl standalone(boolean tls, String host, int port, String username, String password, int database) {
        return new RedisUrl(Topology.STANDALONE, tls, List.of(host + ":" + port), null, username, password, database);
    }

    /** Each node as Redisson takes it: scheme, host and port only. */
    List<String> addresses() {
        return nodes.stream().map(node -> (tls ? "rediss" : "redis") + "://" + node).toList();
    }

    /** The one server's address; for a standalone URL. */
    String address() {
        return addresses().get(0);
    }

    @Override
    public String toString() {
        String scheme = (tls ? "rediss" : "redis") + switch (topology) {
            case STANDALONE -> "";
            case SENTINEL -> "-sentinel";
            case CLUSTER -> "-cluster";
        };
        return scheme + "://" + String.join(",", nodes) + (master == null ? "" : "/" + master)
                + (database == 0 ? "" : "/" + database);
    }

    private static String node(String url, String host, int defaultPort) {
        URI uri;
        try {
            uri = new URI("redis://" + host);
        } catch (URISyntaxException e) {
            throw malformed(url, "'" + host + "' is not a host[:port] (" + e.getReason() + ")");
        }
        if (uri.getHost() == null || uri.getRawUserInfo() != null || uri.getRawPath() != null && !uri.getRawPath().isEmpty()) {
            throw malformed(url, host.isEmpty() ? "it names an empty host" : "'" + host + "' is not a host[:port]");
        }
        if (uri.getPort() != -1 && (uri.getPort() < 1 || uri.getPort() > 65535)) {
            throw malformed(url, "the port must be between 1 and 65535, not " + uri.getPort());
        }
        return uri.getHost() + ":" + (uri.getPort() == -1 ? defaultPort : uri.getPort());
    }

    private static int database(String url, String path) {
        if (path == null || path.isEmpty() || path.equals("/")) {
            return 0;
        }
        String number = path.substring(1);
        if (!number.matches("[0-9]{1,5}")) {
            throw malformed(url, "the path must be a database number such as /2, not " + path);
        }
        return Integer.parseInt(number);
    }

    private static String decode(String part) {
        return URLDecoder.decode(part.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    private static IllegalArgumentException malformed(String url, String why) {
        return new IllegalArgumentException("malformed Redis URL " + redact(url) + ": " + why + "; expected " + SHAPE);
    }

    /** The URL with anything between "//" and "@" hidden, for messages about a URL that did not parse. */
    private static String redact(String url) {
        String text = url.strip();
        int start = text.indexOf("//");
        int at = text.lastIndexOf('@');
        if (start >= 0 && at > start) {
            return text.substring(0, start + 2) + "***@" + text.substring(at + 1);
        }
        return text;
    }
}
