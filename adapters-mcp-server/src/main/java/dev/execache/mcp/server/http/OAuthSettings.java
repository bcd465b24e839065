package dev.execache.mcp.server.http;

import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * {@code serve --http} as an OAuth 2.1 resource server: which authorization server issues the access
 * tokens it takes, and which resource they must be for.
 *
 * @param issuer the authorization server's issuer identifier (its metadata and keys are found from it);
 *     https, or http on a loopback host
 * @param resource this server's resource identifier (RFC 8707), which a token's {@code aud} must name;
 *     null: the URL it serves MCP at (only when it listens on loopback, since behind a balancer or a
 *     proxy the URL clients use is another)
 * @param clockSkew how far a token's {@code exp} and {@code nbf} may be off
 * @param keyRefetchInterval at most two fetches of the issuer's keys in this interval (one is kept for a
 *     key rotated at the issuer: a token signed with a key not yet seen fetches them again)
 */
public record OAuthSettings(URI issuer, URI resource, Duration clockSkew, Duration keyRefetchInterval) {
    public static final Duration DEFAULT_CLOCK_SKEW = Duration.ofSeconds(60);
    public static final Duration DEFAULT_KEY_REFETCH_INTERVAL = Duration.ofSeconds(30);

    public OAuthSettings {
        Objects.requireNonNull(issuer, "issuer must not be null");
        Objects.requireNonNull(clockSkew, "clockSkew must not be null");
        Objects.requireNonNull(keyRefetchInterval, "keyRefetchInterval must not be null");
        checkUrl("--oauth-issuer", issuer);
        if (issuer.getRawQuery() != null) {
            throw new IllegalArgumentException("--oauth-issuer " + issuer + " must not have a query");
        }
        if (resource != null) {
            checkUrl("--oauth-resource", resource);
            resource = canonical(resource);
        }
        if (clockSkew.isNegative() || clockSkew.compareTo(Duration.ofMinutes(5)) > 0) {
            throw new IllegalArgumentException("the clock skew allowed for tokens must be 0 to 5 minutes, not " + clockSkew);
        }
        if (keyRefetchInterval.isNegative()) {
            throw new IllegalArgumentException("the interval between fetches of the issuer's keys must not be negative");
        }
    }

    /** The defaults for an issuer and resource (null: this server's own URL). */
    public static OAuthSettings of(URI issuer, URI resource) {
        return new OAuthSettings(issuer, resource, DEFAULT_CLOCK_SKEW, DEFAULT_KEY_REFETCH_INTERVAL);
    }

    private static void checkUrl(String what, URI uri) {
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!uri.isAbsolute() || uri.getHost() == null || !(scheme.equals("https") || scheme.equals("http"))) {
            throw new IllegalArgumentException(what + " must be an https URL, not '" + uri + "'");
        }
        if (scheme.equals("http") && !loopback(uri.getHost())) {
            throw new IllegalArgumentException(what + " " + uri + " must use https (plain http only on a loopback host)");
        }
        if (uri.getRawFragment() != null) {
            throw new IllegalArgumentException(what + " " + uri + " must not have a fragment (#...)");
        }
    }

    static boolean loopback(String host) {
        String plain = host.toLowerCase(Locale.ROOT);
        return plain.equals("localhost") || plain.equals("127.0.0.1") || plain.equals("[::1]") || plain.equals("::1");
    }

    /**
     * A resource URI in its canonical form (RFC 8707 and the MCP authorization spec): scheme and host in
     * lower case, no default port, no trailing slash on an empty path, no fragment.
     */
    static URI canonical(URI uri) {
        String scheme = uri.getScheme().toLowerCase(Locale.ROOT);
        int port = uri.getPort();
        if ((scheme.equals("https") && port == 443) || (scheme.equals("http") && port == 80)) {
            port = -1;
        }
        String path = uri.getRawPath() == null || uri.getRawPath().equals("/") ? "" : uri.getRawPath();
        String query = uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
        return URI.create(scheme + "://" + uri.getHost().toLowerCase(Locale.ROOT) + (port < 0 ? "" : ":" + port)
                + path + query);
    }
}
