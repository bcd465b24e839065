package dev.execache.mcp.server.http;

import dev.execache.gateway.Json;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.Header;
import com.nimbusds.jose.JOSEObject;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.jwk.source.RateLimitReachedException;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.DefaultJOSEObjectTypeVerifier;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jose.util.DefaultResourceRetriever;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import dev.execache.core.Agents;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.text.ParseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Checks OAuth access tokens (JWTs) for this resource with nimbus-jose-jwt: the signature against the
 * issuer's published keys (found from the issuer's metadata, cached, fetched again for a key not yet
 * seen, at most twice per {@link OAuthSettings#keyRefetchInterval()}), the issuer, the audience (this
 * resource), expiry and not-before with {@link OAuthSettings#clockSkew()}. Only asymmetric signatures
 * are taken: an unsigned token ({@code alg: none}) and one "signed" with HMAC (whose secret could be the
 * issuer's public key) are refused.
 */
final class AccessTokens {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    private static final Set<JWSAlgorithm> ALGORITHMS = Set.of(JWSAlgorithm.RS256, JWSAlgorithm.RS384,
            JWSAlgorithm.RS512, JWSAlgorithm.PS256, JWSAlgorithm.PS384, JWSAlgorithm.PS512, JWSAlgorithm.ES256,
            JWSAlgorithm.ES384, JWSAlgorithm.ES512, JWSAlgorithm.Ed25519, JWSAlgorithm.EdDSA);
    private static final Duration FETCH_TIMEOUT = Duration.ofSeconds(10);
    private static final String ALGORITHM_NOT_TAKEN = "the token is signed with an algorithm this server does not take"
            + " (only RSA, ECDSA and EdDSA keys of the issuer)";

    private final OAuthSettings settings;
    private final URI resource;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(FETCH_TIMEOUT)
            .followRedirects(HttpClient.Redirect.NEVER).build();
    /** How long after a failed read of the issuer's metadata tokens are answered with that failure, not a new try. */
    private static final Duration RETRY_AFTER_FAILURE = Duration.ofSeconds(5);

    /** Built once the issuer's metadata was read; until then a token tries again (at most every few seconds). */
    private volatile DefaultJWTProcessor<SecurityContext> processor;
    /** The last failure to read the metadata and when it happened (System.nanoTime), so that an outage is not hammered. */
    private Unavailable lastFailure;
    private long lastFailureAt;

    /** What a valid token says: who holds it (the agent in figures and logs) and its rights. */
    record Holder(String agent, Set<Scope> scopes) {
    }

    /** A token that is not valid for this resource, and why (never the token itself). */
    static final class Refused extends Exception {
        Refused(String reason) {
            super(reason, null, false, false);
        }
    }

    /** The issuer's metadata or keys could not be read: no token can be checked now. */
    static final class Unavailable extends Exception {
        Unavailable(String reason) {
            super(reason, null, false, false);
        }
    }

    AccessTokens(OAuthSettings settings, URI resource) {
        this.settings = settings;
        this.resource = resource;
    }

    Holder check(String token) throws Refused, Unavailable {
        if (token.chars().filter(c -> c == '.').count() != 2) {
            throw new Refused("the token is not a JWT access token");
        }
        JWTClaimsSet claims;
        try {
            claims = processor().process(token, null);
        } catch (RateLimitReachedException e) {
            // a key not published when the keys were last fetched, and they were fetched just now
            throw new Refused(noKey(token));
        } catch (KeySourceException e) {
            throw new Unavailable("the keys of the authorization server " + settings.issuer()
                    + " could not be read: " + e.getMessage());
        } catch (BadJOSEException e) {
            throw new Refused(e.getMessage() != null && e.getMessage().contains("no matching key") ? noKey(token)
                    : reason(e.getMessage()));
        } catch (ParseException e) {
            throw new Refused("the token is not a valid JWT");
        } catch (com.nimbusds.jose.JOSEException e) {
            throw new Refused("the token's signature could not be checked: " + e.getMessage());
        }
        String agent = Agents.firstOf(claims.getSubject(), stringClaim(claims, "client_id"), stringClaim(claims, "azp"));
        return new Holder(agent, scopes(claims));
    }

    /** Reads the issuer's metadata now, so that a wrong issuer is logged at start rather than at the first token. */
    void prepare() {
        try {
            processor();
        } catch (Unavailable e) {
            LOG.log(Level.WARNING, e.getMessage() + "; tokens are refused until it can be read");
        }
    }

    private static String stringClaim(JWTClaimsSet claims, String name) {
        Object value = claims.getClaim(name);
        return value instanceof String text ? text : null;
    }

    /** {@code scope} as RFC 9068 gives it (space-separated), or {@code scp} as a list (as some providers do). */
    private static Set<Scope> scopes(JWTClaimsSet claims) {
        List<String> given = new ArrayList<>();
        Object scope = claims.getClaim("scope");
        if (scope instanceof String text) {
            given.addAll(List.of(text.trim().split("\\s+")));
        }
        Object scp = claims.getClaim("scp");
        if (scp instanceof String text) {
            given.addAll(List.of(text.trim().split("\\s+")));
        } else if (scp instanceof List<?> list) {
            list.forEach(item -> given.add(String.valueOf(item)));
        }
        Set<Scope> scopes = EnumSet.noneOf(Scope.class);
        for (Scope candidate : Scope.values()) {
            if (given.contains(candidate.value())) {
                scopes.add(candidate);
            }
        }
        return scopes;
    }

    /**
     * Why no key of the issuer was picked: nimbus says "Another algorithm expected, or no matching key(s) found" for
     * both, so the token's header tells which.
     */
    private static String noKey(String token) {
        Header header;
        try {
            header = Header.parse(JOSEObject.split(token)[0]);
        } catch (ParseException e) {
            return "the token is not a valid JWT";
        }
        if (!(header instanceof JWSHeader signed) || !ALGORITHMS.contains(signed.getAlgorithm())) {
            return ALGORITHM_NOT_TAKEN;
        }
        String kid = signed.getKeyID();
        return "the token is signed with a key the issuer does not publish (" + (kid == null ? "it names no key id"
                : "key id " + printable(kid.length() > 64 ? kid.substring(0, 64) + "..." : kid)) + ")";
    }

    private static String printable(String text) {
        return text.replaceAll("[^\\x20-\\x7e]", "?").replace('"', '?').replace('\\', '?');
    }

    /** nimbus's reasons in words a person reads in a 401's error_description. */
    private static String reason(String message) {
        String text = message == null ? "" : message;
        if (text.contains("Expired")) {
            return "the token has expired";
        }
        if (text.contains("before use time")) {
            return "the token is not valid yet (nbf)";
        }
        if (text.contains("audience") || text.contains("aud claim")) {
            return "the token is not for this resource (aud)";
        }
        if (text.contains("iss claim")) {
            return "the token was not issued by the configured authorization server (iss)";
        }
        if (text.contains("Unsecured")) {
            return "the token is not signed (alg none)";
        }
        if (text.contains("algorithm") || text.contains("JWS header")) {
            return ALGORITHM_NOT_TAKEN;
        }
        if (text.contains("signature") || text.contains("matching key")) {
            return "the token's signature does not match a key the issuer publishes";
        }
        if (text.contains("type")) {
            return "the token is not an access token (typ)";
        }
        if (text.contains("missing required claims")) {
            return "the token lacks a required claim (iss, aud, exp)";
        }
        return "the token is not valid: " + printable(text);
    }

    private DefaultJWTProcessor<SecurityContext> processor() throws Unavailable {
        DefaultJWTProcessor<SecurityContext> built = processor;
        if (built != null) {
            return built;
        }
        synchronized (this) {
            if (processor == null) {
                if (lastFailure != null && System.nanoTime() - lastFailureAt < RETRY_AFTER_FAILURE.toNanos()) {
                    throw lastFailure;
                }
                try {
                    processor = build(jwksUri());
                } catch (Unavailable e) {
                    lastFailure = e;
                    lastFailureAt = System.nanoTime();
                    throw e;
                }
            }
            return processor;
        }
    }

    private DefaultJWTProcessor<SecurityContext> build(URL jwks) {
        int timeout = (int) FETCH_TIMEOUT.toMillis();
        JWKSource<SecurityContext> keys = JWKSourceBuilder.<SecurityContext>create(jwks,
                        new DefaultResourceRetriever(timeout, timeout, 512 * 1024))
                .cache(Duration.ofMinutes(15).toMillis(), timeout)
                .rateLimited(settings.keyRefetchInterval().toMillis())
                .refreshAheadCache(false)
                .build();
        DefaultJWTProcessor<SecurityContext> built = new DefaultJWTProcessor<>();
        // RFC 9068's at+jwt, and plain JWT (or none), which most providers put on access tokens
        built.setJWSTypeVerifier(new DefaultJOSEObjectTypeVerifier<>(new JOSEObjectType("at+jwt"),
                new JOSEObjectType("application/at+jwt"), JOSEObjectType.JWT, null));
        built.setJWSKeySelector(new JWSVerificationKeySelector<>(ALGORITHMS, keys));
        DefaultJWTClaimsVerifier<SecurityContext> claims = new DefaultJWTClaimsVerifier<>(Set.of(resource.toString(),
                resource + "/"), new JWTClaimsSet.Builder().issuer(settings.issuer().toString()).build(),
                Set.of("iss", "aud", "exp"), Set.of());
        claims.setMaxClockSkew((int) settings.clockSkew().toSeconds());
        built.setJWTClaimsSetVerifier(claims);
        return built;
    }

    /**
     * The issuer's {@code jwks_uri}, from its metadata: RFC 8414's well-known path first, then OpenID
     * Connect's (as the MCP authorization spec has clients try them). The metadata must name the
     * same issuer (RFC 8414 section 3.3).
     */
    private URL jwksUri() throws Unavailable {
        List<String> tried = new ArrayList<>();
        for (URI candidate : metadataUrls(settings.issuer())) {
            JsonNode metadata;
            try {
                HttpResponse<String> response = http.send(HttpRequest.newBuilder(candidate).timeout(FETCH_TIMEOUT)
                        .header("Accept", "application/json").GET().build(), HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() != 200) {
                    tried.add(candidate + " (" + response.statusCode() + ")");
                    continue;
                }
                metadata = Json.MAPPER.readTree(response.body());
            } catch (IOException e) {
                tried.add(candidate + " (" + why(e) + ")");
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Unavailable("interrupted while reading the metadata of " + settings.issuer());
            }
            String issuer = metadata.path("issuer").asText("");
            if (!issuer.equals(settings.issuer().toString())) {
                throw new Unavailable(candidate + " names the issuer '" + issuer + "', not " + settings.issuer()
                        + " (give --oauth-issuer exactly as the authorization server names itself)");
            }
            String jwks = metadata.path("jwks_uri").asText("");
            try {
                URI uri = URI.create(jwks);
                if (!uri.isAbsolute()) {
                    throw new IllegalArgumentException("not absolute");
                }
                return uri.toURL();
            } catch (IllegalArgumentException | IOException e) {
                throw new Unavailable(candidate + " has no usable jwks_uri ('" + jwks + "')");
            }
        }
        throw new Unavailable("the metadata of the authorization server " + settings.issuer() + " could not be read; "
                + "tried " + String.join(", ", tried));
    }

    /** Why a fetch failed, in words: the JDK's client gives a refused connection no message. */
    private static String why(IOException e) {
        if (e instanceof java.net.http.HttpTimeoutException) {
            return "no answer within " + FETCH_TIMEOUT.toSeconds() + " s";
        }
        if (e instanceof java.net.ConnectException) {
            return "cannot connect" + (e.getMessage() == null ? "" : ": " + e.getMessage());
        }
        return e.getMessage() != null ? e.getMessage() : "cannot read it";
    }

    static List<URI> metadataUrls(URI issuer) {
        String text = issuer.toString();
        String base = text.endsWith("/") ? text.substring(0, text.length() - 1) : text;
        String path = issuer.getRawPath() == null || issuer.getRawPath().equals("/") ? "" : issuer.getRawPath();
        if (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        String origin = base.substring(0, base.length() - path.length());
        List<URI> urls = new ArrayList<>();
        urls.add(URI.create(origin + "/.well-known/oauth-authorization-server" + path));
        urls.add(URI.create(base + "/.well-known/openid-configuration"));
        if (!path.isEmpty()) {
            urls.add(URI.create(origin + "/.well-known/openid-configuration" + path));
        }
        return urls;
    }
}
