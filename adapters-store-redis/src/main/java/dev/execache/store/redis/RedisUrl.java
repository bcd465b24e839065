package dev.execache.store.redis;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * A parsed {@code redis://[[user:]password@]host[:port][/database]} URL ({@code rediss://}
 * for TLS). A user info without a colon is a password, as in Lettuce. {@link #toString()}
 * never shows the credentials, so a URL can go into a message or a log as it is.
 */
record RedisUrl(boolean tls, String host, int port, String username, String password, int database) {
    static final int DEFAULT_PORT = 6379;
    private static final String SHAPE = "redis://[[user:]password@]host[:port][/database] or rediss://...";

    static RedisUrl parse(String url) {
        if (url == null || url.isBlank()) {
            throw new IllegalArgumentException("Redis URL must not be blank; expected " + SHAPE);
        }
        URI uri;
        try {
            uri = new URI(url.strip());
        } catch (URISyntaxException e) {
            throw malformed(url, "it is not a URL (" + e.getReason() + ")");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("redis") && !scheme.equals("rediss")) {
            throw malformed(url, "the scheme must be redis or rediss");
        }
        if (uri.getHost() == null) {
            throw malformed(url, "it names no host");
        }
        if (uri.getPort() != -1 && (uri.getPort() < 1 || uri.getPort() > 65535)) {
            throw malformed(url, "the port must be between 1 and 65535, not " + uri.getPort());
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw malformed(url, "it has a query or fragment, which execache does not read");
        }
        String username = null;
        String password = null;
        String userInfo = uri.getRawUserInfo();
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
        return new RedisUrl(scheme.equals("rediss"), uri.getHost(), uri.getPort() == -1 ? DEFAULT_PORT : uri.getPort(),
                username, password, database(url, uri.getRawPath()));
    }

    /** The server address as Redisson takes it: scheme, host and port only. */
    String address() {
        return (tls ? "rediss" : "redis") + "://" + host + ":" + port;
    }

    @Override
    public String toString() {
        return address() + (database == 0 ? "" : "/" + database);
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
