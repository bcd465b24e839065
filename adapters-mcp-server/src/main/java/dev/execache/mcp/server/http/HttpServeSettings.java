package dev.execache.mcp.server.http;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Where and how {@code serve --http} listens.
 *
 * @param address the address to bind; a loopback one unless tokens are given
 * @param port the port; 0 picks a free one
 * @param tokens the bearer tokens a request may carry; empty: none is asked (loopback only)
 * @param allowedHosts host names a request's Host and Origin may name besides the loopback ones
 * @param maxBodyBytes the largest request body; a larger one is 413
 * @param maxConcurrent requests (and their streams) answered at once; more are 503
 * @param idleTimeout how long a connection may stay silent (reading headers or a body included)
 * @param drainLimit how long a stop waits for the requests still being answered
 * @param metricsTokens tokens that open only the figures ({@code /metrics} and the dashboard's data), for a
 *     scraper or a person who must not run code; the figures also open to every token in {@code tokens}
 * @param oauth OAuth access tokens taken beside the static ones (this server as a resource server); null: none
 */
public record HttpServeSettings(InetAddress address, int port, List<HttpToken> tokens, Set<String> allowedHosts,
        int maxBodyBytes, int maxConcurrent, Duration idleTimeout, Duration drainLimit, List<HttpToken> metricsTokens,
        OAuthSettings oauth) {
    public static final int DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
    public static final int DEFAULT_MAX_CONCURRENT = 64;
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(30);

    public HttpServeSettings {
        Objects.requireNonNull(address, "address must not be null");
        Objects.requireNonNull(idleTimeout, "idleTimeout must not be null");
        Objects.requireNonNull(drainLimit, "drainLimit must not be null");
        tokens = List.copyOf(Objects.requireNonNull(tokens, "tokens must not be null"));
        metricsTokens = List.copyOf(Objects.requireNonNull(metricsTokens, "metricsTokens must not be null"));
        allowedHosts = Set.copyOf(Objects.requireNonNull(allowedHosts, "allowedHosts must not be null"));
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 0..65535, not " + port);
        }
        if (maxBodyBytes < 1024) {
            throw new IllegalArgumentException("maxBodyBytes must be at least 1024, not " + maxBodyBytes);
        }
        if (maxConcurrent < 1) {
            throw new IllegalArgumentException("maxConcurrent must be at least 1, not " + maxConcurrent);
        }
        if (!address.isLoopbackAddress() && tokens.isEmpty() && oauth == null) {
            throw new IllegalArgumentException("binding " + address.getHostAddress() + ", which is not a loopback "
                    + "address, needs a token (EXECACHE_HTTP_TOKEN or --http-token-file) or --oauth-issuer: anyone who "
                    + "can reach it could run code");
        }
        if (oauth != null && oauth.resource() == null && !address.isLoopbackAddress()) {
            throw new IllegalArgumentException("with --oauth-issuer on " + address.getHostAddress() + ", which is not "
                    + "a loopback address, give --oauth-resource: the URL clients reach MCP at (such as "
                    + "https://mcp.example.org/mcp), which tokens must be issued for");
        }
    }

    /** The same, answering bodies up to {@code maxBody} bytes, {@code atOnce} requests at once, silent {@code idle} at most. */
    public HttpServeSettings withLimits(int maxBody, int atOnce, Duration idle) {
        return new HttpServeSettings(address, port, tokens, allowedHosts, maxBody, atOnce, idle, drainLimit, metricsTokens,
                oauth);
    }

    /** The same, with tokens that open only the figures. */
    public HttpServeSettings withMetricsTokens(List<HttpToken> figuresOnly) {
        return new HttpServeSettings(address, port, tokens, allowedHosts, maxBodyBytes, maxConcurrent, idleTimeout,
                drainLimit, figuresOnly, oauth);
    }

    /** The same, taking OAuth access tokens too (null: none). */
    public HttpServeSettings withOAuth(OAuthSettings accessTokens) {
        return new HttpServeSettings(address, port, tokens, allowedHosts, maxBodyBytes, maxConcurrent, idleTimeout,
                drainLimit, metricsTokens, accessTokens);
    }

    /** The defaults for a bind address, port, tokens and extra host names. */
    public static HttpServeSettings of(InetAddress address, int port, List<HttpToken> tokens, Set<String> allowedHosts,
            Duration drainLimit) {
        return new HttpServeSettings(address, port, tokens, allowedHosts, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENT,
                DEFAULT_IDLE_TIMEOUT, drainLimit, List.of(), null);
    }

    /**
     * A bearer token and the name it is known by in logs (never the token itself).
     *
     * @param name who holds it, as the token file names it
     * @param secret the token
     * @param named whether the token file gave the name ({@code NAME TOKEN}): then the calls made with
     *     the token are counted for the agent of that name; a bare token's calls are counted for the
     *     client's name
     */
    public record HttpToken(String name, String secret, boolean named) {
        public HttpToken(String name, String secret) {
            this(name, secret, false);
        }

        public HttpToken {
            Objects.requireNonNull(name, "name must not be null");
            Objects.requireNonNull(secret, "secret must not be null");
            if (secret.length() < 16) {
                throw new IllegalArgumentException("token " + name + " is shorter than 16 characters; use a long "
                        + "random one (openssl rand -hex 32)");
            }
            if (secret.chars().anyMatch(c -> c <= ' ' || c > '~')) {
                throw new IllegalArgumentException("token " + name + " must be printable ASCII without spaces");
            }
        }

        @Override
        public String toString() {
            return "HttpToken[" + name + "]";
        }
    }
}
