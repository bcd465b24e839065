package dev.execache.tools.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.tools.mcp.HttpMcpException.Kind;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * OAuth access tokens for a url server, machine to machine: the client credentials grant (RFC 6749
 * 4.4) with {@code client_secret_basic} or {@code client_secret_post}, at the token endpoint named
 * by the authorization server's metadata (RFC 8414), which the server's protected-resource
 * metadata names (RFC 9728). A token is kept and renewed before it expires, and dropped when the
 * server refuses it.
 */
final class ClientCredentialsTokens {
    /** A token is renewed when less than this share of its life, at most the margin below, is left. */
    private static final Duration RENEW_MARGIN = Duration.ofSeconds(60);
    private static final Pattern RESOURCE_METADATA = Pattern.compile("resource_metadata=\"([^\"]+)\"");

    private final String server;
    private final URI resource;
    private final UrlServerSettings.ClientCredentials credentials;
    private final String secret;
    private final HttpClient http;
    private final Clock clock;
    private final Duration timeout;
    private final ObjectMapper json = new ObjectMapper();

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
        this.http = http;
        this.clock = clock;
        this.timeout = timeout;
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
        if (challenge != null) {
            Matcher matcher = RESOURCE_METADATA.matcher(challenge);
            if (matcher.find()) {
                URI named = URI.create(matcher.group(1));
                if (!named.equals(resourceMetadata)) {
                    resourceMetadata = named;
                    tokenEndpoint = null;
                    return true;
                }
            }
        }
        return had;
    }

    private void fetch() {
        if (tokenEndpoint == null) {
            tokenEndpoint = discoverTokenEndpoint();
        }
        requireSafe(tokenEndpoint, "token endpoint");
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", "client_credentials");
        if (credentials.scope() != null) {
            form.put("scope", credentials.scope());
        }
        form.put("resource", resource.toString());
        HttpRequest.Builder request = HttpRequest.newBuilder(tokenEndpoint).timeout(timeout)
                .header("Content-Type", "application/x-www-form-urlencoded").header("Accept", "application/json");
        if (credentials.authMethod().equals("client_secret_post")) {
            form.put("client_id", credentials.clientId());
            form.put("client_secret", secret);
        } else {
            String pair = encode(credentials.clientId()) + ":" + encode(secret);
            request.header("Authorization", "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8)));
        }
        String body = form.entrySet().stream().map(field -> encode(field.getKey()) + "=" + encode(field.getValue()))
                .collect(Collectors.joining("&"));
        Instant asked = clock.instant();
        JsonNode answer = getJson(request.POST(HttpRequest.BodyPublishers.ofString(body)), "its token endpoint");
        if (!answer.path("access_token").isTextual()) {
            throw new HttpMcpException(Kind.CREDENTIALS_REFUSED, "server " + server + ": the token endpoint gave no access_token"
                    + (answer.has("error") ? " (" + answer.path("error").asText() + ")" : ""));
        }
        token = answer.get("access_token").asText();
        long lifetime = answer.path("expires_in").asLong(3600);
        Duration margin = Duration.ofSeconds(Math.min(RENEW_MARGIN.toSeconds(), lifetime / 2));
        renewAt = asked.plusSeconds(lifetime).minus(margin);
    }

    /** The protected-resource metadata (RFC 9728) names the authorization server, whose metadata (RFC 8414) names the token endpoint. */
    private URI discoverTokenEndpoint() {
        List<URI> resourceCandidates = new ArrayList<>();
        if (resourceMetadata != null) {
            resourceCandidates.add(resourceMetadata);
        }
        resourceCandidates.addAll(wellKnown(resource, "oauth-protected-resource"));
        JsonNode protectedResource = firstFound(resourceCandidates, "protected-resource metadata");
        JsonNode servers = protectedResource.path("authorization_servers");
        if (!servers.isArray() || servers.isEmpty()) {
            throw new HttpMcpException(Kind.CREDENTIALS_REFUSED, "server " + server
                    + ": its protected-resource metadata names no authorization server");
        }
        URI issuer = URI.create(servers.get(0).asText());
        List<URI> issuerCandidates = new ArrayList<>(wellKnown(issuer, "oauth-authorization-server"));
        issuerCandidates.addAll(wellKnown(issuer, "openid-configuration"));
        JsonNode authorizationServer = firstFound(issuerCandidates, "authorization server metadata");
        if (!authorizationServer.path("token_endpoint").isTextual()) {
            throw new HttpMcpException(Kind.CREDENTIALS_REFUSED, "server " + server
                    + ": its authorization server's metadata names no token_endpoint");
        }
        return URI.create(authorizationServer.get("token_endpoint").asText());
    }

    /** {@code https://host/.well-known/NAME/path}, then {@code https://host/.well-known/NAME}. */
    private static List<URI> wellKnown(URI base, String name) {
        String origin = base.getScheme() + "://" + base.getRawAuthority();
        String path = base.getRawPath() == null || base.getRawPath().equals("/") ? "" : base.getRawPath();
        List<URI> candidates = new ArrayList<>();
        if (!path.isEmpty()) {
            candidates.add(URI.create(origin + "/.well-known/" + name + (path.endsWith("/") ? path.substring(0, path.length() - 1) : path)));
        }
        candidates.add(URI.create(origin + "/.well-known/" + name));
        return candidates;
    }

    private JsonNode firstFound(List<URI> candidates, String what) {
        for (URI candidate : candidates) {
            HttpResponse<String> response = send(HttpRequest.newBuilder(candidate).timeout(timeout)
                    .header("Accept", "application/json").GET(), what);
            if (response.statusCode() == 200) {
                return parse(response.body(), what);
            }
        }
        throw new HttpMcpException(Kind.CREDENTIALS_REFUSED, "server " + server + ": no " + what + " found at "
                + candidates.stream().map(UrlServerSettings::withoutQuery).collect(Collectors.joining(", ")));
    }

    private JsonNode getJson(HttpRequest.Builder request, String what) {
        HttpResponse<String> response = send(request, what);
        if (response.statusCode() / 100 != 2) {
            JsonNode error = parseQuietly(response.body());
            throw new HttpMcpException(Kind.CREDENTIALS_REFUSED, response.statusCode(), null, "server " + server
                    + ": " + what + " refused the client credentials of " + credentials.clientId() + " (HTTP "
                    + response.statusCode() + (error.has("error") ? ", " + error.path("error").asText() : "") + ")");
        }
        return parse(response.body(), what);
    }

    private HttpResponse<String> send(HttpRequest.Builder request, String what) {
        try {
            return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new HttpMcpException(Kind.UNREACHABLE, "server " + server + ": its " + what + " cannot be reached: "
                    + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HttpMcpException(Kind.TIMEOUT, "server " + server + ": asking for its " + what + " was interrupted");
        }
    }

    private JsonNode parse(String body, String what) {
        try {
            return json.readTree(body);
        } catch (IOException e) {
            throw new HttpMcpException(Kind.PROTOCOL, "server " + server + ": its " + what + " is not JSON");
        }
    }

    private JsonNode parseQuietly(String body) {
        try {
            return json.readTree(body == null || body.isBlank() ? "{}" : body);
        } catch (IOException e) {
            return json.createObjectNode();
        }
    }

    /** The secret goes only where it cannot be read on the way: https, or this machine. */
    private void requireSafe(URI endpoint, String what) {
        String host = endpoint.getHost() == null ? "" : endpoint.getHost();
        boolean loopback = host.equals("localhost") || host.equals("127.0.0.1") || host.equals("[::1]") || host.equals("::1");
        if (!"https".equalsIgnoreCase(endpoint.getScheme()) && !loopback) {
            throw new HttpMcpException(Kind.CREDENTIALS_REFUSED, "server " + server + ": its " + what + " "
                    + UrlServerSettings.withoutQuery(endpoint) + " is not https; execache does not send the client secret there");
        }
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
