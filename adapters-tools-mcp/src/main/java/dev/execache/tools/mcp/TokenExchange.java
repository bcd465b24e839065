package dev.execache.tools.mcp;

import dev.execache.core.spi.ToolCatalog;
import dev.execache.tools.mcp.HttpMcpException.Kind;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Each person's token for a url server reached as them ({@code identity: exchange}): the access token they presented
 * to execache is exchanged (RFC 8693) at their identity provider's token endpoint, with the entry's OAuth client, for
 * one whose audience is the server ({@code resource} and {@code audience} name it). The token endpoint is the one
 * the server's protected-resource metadata (RFC 9728) leads to. Each person's token is kept in memory only, until a
 * minute (or half its life) before it expires, and dropped when the server refuses it; never stored nor logged.
 */
final class TokenExchange {
    static final String GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
    static final String ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token";
    /** Beyond this many people, the tokens already expired are dropped before one more is kept. */
    private static final int SWEEP_ABOVE = 1024;

    private final String server;
    private final URI resource;
    private final UrlServerSettings.ClientCredentials credentials;
    private final String secret;
    private final Clock clock;
    private final OAuthDiscovery discovery;
    private final Map<String, Held> held = new ConcurrentHashMap<>();
    private volatile URI tokenEndpoint;

    /** One person's token for the server, and when to renew it. */
    private record Held(String token, Instant renewAt) {
    }

    TokenExchange(String server, URI resource, UrlServerSettings.ClientCredentials credentials, String secret,
            HttpClient http, Clock clock, Duration timeout) {
        this.server = server;
        this.resource = resource;
        this.credentials = credentials;
        this.secret = secret;
        this.clock = clock;
        this.discovery = new OAuthDiscovery(server, http, timeout);
    }

    /**
     * A token for the server as {@code person}: the one kept, or a new exchange.
     *
     * @throws HttpMcpException of {@link Kind#CREDENTIALS_REFUSED} saying what to do when the exchange is refused
     */
    String token(ToolCatalog.Person person) {
        Held kept = held.get(person.subject());
        if (kept != null && clock.instant().isBefore(kept.renewAt())) {
            return kept.token();
        }
        Held fresh = exchange(person);
        if (held.size() >= SWEEP_ABOVE) {
            Instant now = clock.instant();
            held.values().removeIf(old -> !now.isBefore(old.renewAt()));
        }
        held.put(person.subject(), fresh);
        return fresh.token();
    }

    /** The server refused {@code person}'s token: it is dropped, so that the next call exchanges again. */
    void refused(ToolCatalog.Person person, String token) {
        held.computeIfPresent(person.subject(), (subject, kept) -> kept.token().equals(token) ? null : kept);
    }

    private URI tokenEndpoint() {
        URI known = tokenEndpoint;
        if (known == null) {
            known = discovery.endpoint(discovery.authorizationServer(discovery.issuer(
                    discovery.protectedResource(null, resource))), "token_endpoint");
            tokenEndpoint = known;
        }
        return known;
    }

    private Held exchange(ToolCatalog.Person person) {
        URI endpoint;
        try {
            endpoint = tokenEndpoint();
        } catch (HttpMcpException e) {
            throw refused(e.getMessage());
        }
        discovery.requireSafe(endpoint, "token endpoint", "the client secret");
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", GRANT);
        form.put("subject_token", person.token());
        form.put("subject_token_type", ACCESS_TOKEN);
        form.put("requested_token_type", ACCESS_TOKEN);
        form.put("resource", resource.toString());
        form.put("audience", resource.toString());
        form.put("scope", credentials.scope());
        Map<String, String> headers = ClientCredentialsTokens.authenticate(credentials, secret, form);
        Instant asked = clock.instant();
        OAuthDiscovery.Answer answer;
        try {
            answer = discovery.postForm(endpoint, form, headers, "token endpoint");
        } catch (HttpMcpException e) {
            throw refused(e.getMessage() + "; try again shortly");
        }
        if (answer.status() == 401 || "invalid_client".equals(answer.error()) || "unauthorized_client".equals(answer.error())) {
            throw refused("server " + server + ": the identity provider refused execache's client " + credentials.clientId()
                    + " for exchanging tokens (HTTP " + answer.status() + said(answer) + "); check the entry's"
                    + " oauth.client_id and oauth.client_secret, and that the provider lets that client exchange tokens");
        }
        if (!answer.ok()) {
            throw refused("server " + server + ": the identity provider would not exchange your access token for one"
                    + " meant for this server (HTTP " + answer.status() + said(answer) + "); sign in to execache again"
                    + " for a new token, or ask whoever runs the provider to let you reach " + resource);
        }
        if (!answer.body().path("access_token").isTextual()) {
            throw refused("server " + server + ": the identity provider's token exchange gave no access_token");
        }
        return new Held(answer.body().get("access_token").asText(),
                ClientCredentialsTokens.renewAt(asked, answer.body().path("expires_in").asLong(3600)));
    }

    /** The provider's error code, and its description when it gave one: words of the provider, never a token. */
    private static String said(OAuthDiscovery.Answer answer) {
        if (answer.error() == null) {
            return "";
        }
        String description = answer.body().path("error_description").asText("");
        return ", " + answer.error() + (description.isBlank() ? "" : ": " + description);
    }

    private static HttpMcpException refused(String message) {
        return new HttpMcpException(Kind.CREDENTIALS_REFUSED, message);
    }
}
