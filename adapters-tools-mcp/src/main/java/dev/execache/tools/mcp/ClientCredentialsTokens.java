package dev.execache.tools.mcp;

import dev.execache.tools.mcp.HttpMcpException.Kind;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * OAuth access tokens for a url server, machine to machine: the client credentials grant (RFC 6749
 * 4.4) with {@code client_secret_basic} or {@code client_secret_post}, at the token endpoint named
 * by the authorization server's metadata (RFC 8414), which the server's protected-resource
 * metadata names (RFC 9728). A token is kept and renewed before it expires, and dropped when the
 * server refuses it.
 */
final class ClientCredentialsTokens {
    /** A token is renewed when less than this share of its life, at most the margin below, is left. */
    static final Duration RENEW_MARGIN = Duration.ofSeconds(60);

    private final String server;
    private final URI resource;
    private final UrlServerSettings.ClientCredentials credentials;
    private final String secret;
    private final Clock clock;
    private final OAuthDiscovery discovery;

    private URI resourceMetadata;
    private URI tokenEndpoint;
    private String token;
    private Instant renewAt = Instant.MIN;

    ClientCredentialsTokens(String server, URI resource, UrlServerSettings.ClientCredentials credentials, String secret,
            HttpClient http, Clock clock, Duration timeout) {
        this.server = server;
        this.resource = resource;
        this.credentials = credentials;
        this.secret = secret;
        this.clock = clock;
        this.discovery = new OAuthDiscovery(server, http, timeout);
    }

    /** A token that is not about to expire: the one kept, or a new one. */
    synchronized String token() {
        if (token == null || !clock.instant().isBefore(renewAt)) {
            fetch();
        }
        return token;
    }

    /**
     * The server refused the token (401): drop it, and learn where its metadata is from the
     * challenge. Returns whether asking again with a new token makes sense.
     */
    synchronized boolean refused(String challenge) {
        boolean had = token != null;
        token = null;
        URI named = OAuthDiscovery.resourceMetadata(challenge);
        if (named != null && !named.equals(resourceMetadata)) {
            resourceMetadata = named;
            tokenEndpoint = null;
            return true;
        }
        return had;
    }

    private void fetch() {
        if (tokenEndpoint == null) {
            tokenEndpoint = discovery.endpoint(discovery.authorizationServer(discovery.issuer(
                    discovery.protectedResource(resourceMetadata, resource))), "token_endpoint");
        }
        discovery.requireSafe(tokenEndpoint, "token endpoint", "the client secret");
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", "client_credentials");
        form.put("scope", credentials.scope());
        form.put("resource", resource.toString());
        Map<String, String> headers = authenticate(credentials, secret, form);
        Instant asked = clock.instant();
        OAuthDiscovery.Answer answer = discovery.postForm(tokenEndpoint, form, headers, "token endpoint");
        if (!answer.ok()) {
            throw new HttpMcpException(Kind.CREDENTIALS_REFUSED, answer.status(), null, "server " + server
                    + ": its token endpoint refused the client credentials of " + credentials.clientId() + " (HTTP "
                    + answer.status() + (answer.error() != null ? ", " + answer.error() : "") + ")");
        }
        if (!answer.body().path("access_token").isTextual()) {
            throw new HttpMcpException(Kind.CREDENTIALS_REFUSED, "server " + server + ": the token endpoint gave no access_token"
                    + (answer.error() != null ? " (" + answer.error() + ")" : ""));
        }
        token = answer.body().get("access_token").asText();
        renewAt = renewAt(asked, answer.body().path("expires_in").asLong(3600));
    }

    /**
     * Authenticates {@code credentials}' client at a token endpoint as its {@code auth_method} says: in the form
     * ({@code client_secret_post}), else by HTTP Basic; returns the request's headers.
     */
    static Map<String, String> authenticate(UrlServerSettings.ClientCredentials credentials, String secret,
            Map<String, String> form) {
        Map<String, String> headers = new LinkedHashMap<>();
        if (credentials.authMethod().equals("client_secret_post")) {
            form.put("client_id", credentials.clientId());
            form.put("client_secret", secret);
        } else {
            String pair = OAuthDiscovery.encode(credentials.clientId()) + ":" + OAuthDiscovery.encode(secret);
            headers.put("Authorization", "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8)));
        }
        return headers;
    }

    /** A minute before the token expires, or half its life when that is shorter. */
    static Instant renewAt(Instant asked, long lifetimeSeconds) {
        Duration margin = Duration.ofSeconds(Math.min(RENEW_MARGIN.toSeconds(), lifetimeSeconds / 2));
        return asked.plusSeconds(lifetimeSeconds).minus(margin);
    }
}
