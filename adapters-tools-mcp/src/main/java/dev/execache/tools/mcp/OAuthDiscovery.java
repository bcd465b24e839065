package dev.execache.tools.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.tools.mcp.HttpMcpException.Kind;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Where a url server's tokens come from: its protected-resource metadata (RFC 9728, named by a 401's
 * {@code WWW-Authenticate} or at its well-known place) names its authorization server, whose metadata
 * (RFC 8414, or OpenID Connect discovery) names the endpoints. Also the form posts to those endpoints.
 * Written here rather than with an OAuth library so that every request goes through the JDK client the
 * url server's own requests use, with the same timeouts and messages.
 */
final class OAuthDiscovery {
    private static final Pattern RESOURCE_METADATA = Pattern.compile("resource_metadata=\"([^\"]+)\"");
    private static final Pattern SCOPE = Pattern.compile("scope=\"([^\"]*)\"");

    private final String server;
    private final HttpClient http;
    private final Duration timeout;
    private final ObjectMapper json = new ObjectMapper();

    OAuthDiscovery(String server, HttpClient http, Duration timeout) {
        this.server = server;
        this.http = http;
        this.timeout = timeout;
    }

    /** The protected-resource metadata URL a 401's challenge names, or null. */
    static URI resourceMetadata(String challenge) {
        if (challenge == null) {
            return null;
        }
        Matcher matcher = RESOURCE_METADATA.matcher(challenge);
        return matcher.find() ? URI.create(matcher.group(1)) : null;
    }

    /** The scope a 401's challenge asks for, or null. */
    static String scope(String challenge) {
        if (challenge == null) {
            return null;
        }
        Matcher matcher = SCOPE.matcher(challenge);
        return matcher.find() && !matcher.group(1).isBlank() ? matcher.group(1) : null;
    }

    /** The resource's metadata: at {@code named} (from a challenge, may be null), else at its well-known places. */
    JsonNode protectedResource(URI named, URI resource) {
        List<URI> candidates = new ArrayList<>();
        if (named != null) {
            candidates.add(named);
        }
        candidates.addAll(wellKnown(resource, "oauth-protected-resource"));
        return firstFound(candidates, "protected-resource metadata");
    }

    /** As {@link #protectedResource}, or null when the server has none (no place answers 200). */
    JsonNode protectedResourceIfAny(URI named, URI resource) {
        List<URI> candidates = new ArrayList<>();
        if (named != null) {
            candidates.add(named);
        }
        candidates.addAll(wellKnown(resource, "oauth-protected-resource"));
        return firstFoundOrNull(candidates, "protected-resource metadata");
    }

    /**
     * The metadata of an authorization server at a server's origin, as the 2025-03-26 revision had it: at its
     * well-known place, else the default endpoints ({@code /authorize}, {@code /token}, {@code /register}) with PKCE,
     * which that revision required of every authorization server.
     */
    JsonNode authorizationServerOrDefaults(URI origin) {
        JsonNode found = firstFoundOrNull(List.of(wellKnown(origin, "oauth-authorization-server").get(0)),
                "authorization server metadata");
        if (found != null) {
            return found;
        }
        ObjectNode defaults = json.createObjectNode();
        defaults.put("issuer", origin.toString());
        defaults.put("authorization_endpoint", origin + "/authorize");
        defaults.put("token_endpoint", origin + "/token");
        defaults.put("registration_endpoint", origin + "/register");
        defaults.putArray("code_challenge_methods_supported").add("S256");
        return defaults;
    }

    /** The first authorization server the protected-resource metadata names. */
    URI issuer(JsonNode protectedResource) {
        JsonNode servers = protectedResource.path("authorization_servers");
        if (!servers.isArray() || servers.isEmpty() || !servers.get(0).isTextual()) {
            throw new HttpMcpException(Kind.CREDENTIALS_REFUSED, "server " + server
                    + ": its protected-resource metadata names no authorization server");
        }
        return URI.create(servers.get(0).asText());
    }

    /**
     * The authorization server's metadata (RFC 8414, else OpenID Connect discovery). An issuer with a
     * path is looked for only under that path: the host's root may be another tenant's.
     */
    JsonNode authorizationServer(URI issuer) {
        String path = issuer.getRawPath() == null ? "" : issuer.getRawPath();
        List<URI> candidates = new ArrayList<>();
        if (path.isEmpty() || path.equals("/")) {
            candidates.addAll(wellKnown(issuer, "oauth-authorization-server"));
            candidates.addAll(wellKnown(issuer, "openid-configuration"));
        } else {
            candidates.add(wellKnown(issuer, "oauth-authorization-server").get(0));
            candidates.add(wellKnown(issuer, "openid-configuration").get(0));
            // OpenID Connect's own place: the issuer's path, then the well-known suffix
            candidates.add(URI.create(issuer.toString().replaceAll("/$", "") + "/.well-known/openid-configuration"));
        }
        return firstFound(candidates, "authorization server metadata");
    }

    /** An endpoint the metadata names. */
    URI endpoint(JsonNode metadata, String name) {
        if (!metadata.path(name).isTextual()) {
            throw new HttpMcpException(Kind.CREDENTIALS_REFUSED, "server " + server
                    + ": its authorization server's metadata names no " + name);
        }
        return URI.create(metadata.get(name).asText());
    }

    /** {@code https://host/.well-known/NAME/path}, then {@code https://host/.well-known/NAME}. */
    static List<URI> wellKnown(URI base, String name) {
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
        JsonNode found = firstFoundOrNull(candidates, what);
        if (found != null) {
            return found;
        }
        throw new HttpMcpException(Kind.CREDENTIALS_REFUSED, "server " + server + ": no " + what + " found at "
                + candidates.stream().map(UrlServerSettings::withoutQuery).collect(Collectors.joining(", ")));
    }

    private JsonNode firstFoundOrNull(List<URI> candidates, String what) {
        for (URI candidate : candidates) {
            HttpResponse<String> response = send(HttpRequest.newBuilder(candidate).timeout(timeout)
                    .header("Accept", "application/json").GET(), what);
            if (response.statusCode() == 200) {
                return parse(response.body(), what);
            }
        }
        return null;
    }

    /** A form post to one of the authorization server's endpoints; the answer whatever its status. */
    Answer postForm(URI endpoint, Map<String, String> form, Map<String, String> headers, String what) {
        String body = form.entrySet().stream().filter(field -> field.getValue() != null)
                .map(field -> encode(field.getKey()) + "=" + encode(field.getValue())).collect(Collectors.joining("&"));
        HttpRequest.Builder request = HttpRequest.newBuilder(endpoint).timeout(timeout)
                .header("Content-Type", "application/x-www-form-urlencoded").header("Accept", "application/json");
        headers.forEach(request::header);
        HttpResponse<String> response = send(request.POST(HttpRequest.BodyPublishers.ofString(body)), what);
        return new Answer(response.statusCode(), parseQuietly(response.body()));
    }

    /** A JSON post (dynamic client registration); the answer whatever its status. */
    Answer postJson(URI endpoint, JsonNode body, String what) {
        HttpResponse<String> response = send(HttpRequest.newBuilder(endpoint).timeout(timeout)
                .header("Content-Type", "application/json").header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())), what);
        return new Answer(response.statusCode(), parseQuietly(response.body()));
    }

    /** A status and the JSON body (an empty object when it was not JSON). */
    record Answer(int status, JsonNode body) {
        boolean ok() {
            return status / 100 == 2;
        }

        /** The OAuth error code of an error answer, or null. */
        String error() {
            return body.path("error").isTextual() ? body.get("error").asText() : null;
        }
    }

    HttpResponse<String> send(HttpRequest.Builder request, String what) {
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

    JsonNode parse(String body, String what) {
        try {
            return json.readTree(body);
        } catch (IOException e) {
            throw new HttpMcpException(Kind.PROTOCOL, "server " + server + ": its " + what + " is not JSON");
        }
    }

    private JsonNode parseQuietly(String body) {
        try {
            JsonNode parsed = json.readTree(body == null || body.isBlank() ? "{}" : body);
            return parsed == null || !parsed.isObject() ? json.createObjectNode() : parsed;
        } catch (IOException e) {
            return json.createObjectNode();
        }
    }

    /** Secrets go only where they cannot be read on the way: https, or this machine. */
    void requireSafe(URI endpoint, String what, String secretName) {
        if (!"https".equalsIgnoreCase(endpoint.getScheme()) && !loopback(endpoint)) {
            throw new HttpMcpException(Kind.CREDENTIALS_REFUSED, "server " + server + ": its " + what + " "
                    + UrlServerSettings.withoutQuery(endpoint) + " is not https; execache does not send " + secretName + " there");
        }
    }

    static boolean loopback(URI endpoint) {
        String host = endpoint.getHost() == null ? "" : endpoint.getHost();
        return host.equals("localhost") || host.equals("127.0.0.1") || host.equals("[::1]") || host.equals("::1");
    }

    static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
