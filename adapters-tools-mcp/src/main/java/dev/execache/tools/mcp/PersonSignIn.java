package dev.execache.tools.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * A person signs in to a url server once: the server's 401 names its protected-resource metadata
 * (RFC 9728), which names its authorization server (RFC 8414 metadata); execache registers itself
 * there (RFC 7591) unless the server's entry names a client, and runs the authorization code flow
 * with PKCE (S256) for the server as {@code resource} (RFC 8707), the person's browser coming back
 * to a callback on loopback (RFC 8252). The tokens are kept by {@link SignIns}. The flow is written
 * here, not with an OAuth library, so that it shares the discovery and HTTP client of the url
 * server's own requests.
 */
public final class PersonSignIn {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String CALLBACK = "/callback";

    private final UrlServerSettings server;
    private final SignIns store;
    private final Clock clock;
    private final Duration timeout;
    private final HttpClient http;
    private final OAuthDiscovery discovery;
    private final ObjectMapper json = new ObjectMapper();

    /** A sign-in that could not be made, saying why in words a person can act on. */
    public static final class SignInException extends RuntimeException {
        SignInException(String message) {
            super(message);
        }
    }

    /**
     * @param timeout how long each request to the server or its authorization server may take
     */
    public PersonSignIn(UrlServerSettings server, SignIns store, Clock clock, Duration timeout) {
        this.server = Objects.requireNonNull(server, "server must not be null");
        this.store = Objects.requireNonNull(store, "store must not be null");
        this.clock = clock;
        this.timeout = timeout;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).build();
        this.discovery = new OAuthDiscovery(server.name(), http, timeout);
    }

    /**
     * Signs the person in: listens for the browser on loopback ({@code port}, 0 for any free one),
     * gives {@code show} the URL to open, and waits at most {@code wait} for the browser to come back.
     *
     * @return what may be shown of the new sign-in
     * @throws SignInException saying what went wrong
     */
    public SignIns.State signIn(int port, Consumer<URI> show, Duration wait) throws InterruptedException {
        return signIn(port, show, wait, null);
    }

    /**
     * As {@link #signIn(int, Consumer, Duration)}, after the server refused a request with {@code refusal} (its
     * WWW-Authenticate: where its metadata is, the scope it wants); null: the server is asked without credentials.
     */
    public SignIns.State signIn(int port, Consumer<URI> show, Duration wait, String refusal) throws InterruptedException {
        try {
            return run(port, show, wait, refusal);
        } catch (HttpMcpException e) {
            throw new SignInException(e.getMessage());
        }
    }

    private SignIns.State run(int port, Consumer<URI> show, Duration wait, String refusal) throws InterruptedException {
        String challenge = refusal != null ? refusal : challenge();
        JsonNode protectedResource = discovery.protectedResourceIfAny(OAuthDiscovery.resourceMetadata(challenge), server.url());
        URI issuer;
        JsonNode metadata;
        if (protectedResource == null && challenge == null) {
            throw new SignInException("server " + server.name() + " does not say where to sign in: it did not ask for"
                    + " credentials, and it has no protected-resource metadata");
        }
        if (protectedResource == null) {
            // the 2025-03-26 revision, before protected-resource metadata: the server's origin is its authorization
            // server, with its metadata there or else the default endpoints
            protectedResource = json.createObjectNode();
            issuer = URI.create(server.url().getScheme() + "://" + server.url().getRawAuthority());
            metadata = discovery.authorizationServerOrDefaults(issuer);
        } else {
            issuer = discovery.issuer(protectedResource);
            metadata = discovery.authorizationServer(issuer);
        }
        URI resource = resource(protectedResource);
        if (!issuer.toString().equals(metadata.path("issuer").asText())) {
            // RFC 8414 3.3: metadata whose issuer is not the one asked for may be an attacker's
            throw new SignInException("server " + server.name() + ": the metadata of its authorization server " + issuer
                    + " names another issuer (" + metadata.path("issuer").asText() + "); execache does not sign in there");
        }
        if (!containsText(metadata.path("code_challenge_methods_supported"), "S256")) {
            throw new SignInException("server " + server.name() + ": its authorization server " + issuer
                    + " does not offer PKCE with S256 (code_challenge_methods_supported), which a sign-in needs");
        }
        URI authorizationEndpoint = discovery.endpoint(metadata, "authorization_endpoint");
        URI tokenEndpoint = discovery.endpoint(metadata, "token_endpoint");
        discovery.requireSafe(tokenEndpoint, "token endpoint", "a sign-in's code");

        CompletableFuture<Map<String, String>> callback = new CompletableFuture<>();
        HttpServer listener = listen(port, callback);
        try {
            URI redirect = URI.create("http://127.0.0.1:" + listener.getAddress().getPort() + CALLBACK);
            Client client = client(metadata, redirect);
            String verifier = random(32);
            String state = random(16);
            Map<String, String> query = new LinkedHashMap<>();
            query.put("response_type", "code");
            query.put("client_id", client.id());
            query.put("redirect_uri", redirect.toString());
            query.put("code_challenge", challengeOf(verifier));
            query.put("code_challenge_method", "S256");
            query.put("state", state);
            query.put("resource", resource.toString());
            String scope = scope(challenge, protectedResource);
            query.put("scope", scope);
            String joined = query.entrySet().stream().filter(field -> field.getValue() != null)
                    .map(field -> OAuthDiscovery.encode(field.getKey()) + "=" + OAuthDiscovery.encode(field.getValue()))
                    .collect(Collectors.joining("&"));
            show.accept(URI.create(authorizationEndpoint + (authorizationEndpoint.getRawQuery() == null ? "?" : "&") + joined));

            Map<String, String> back;
            try {
                back = callback.get(wait.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new SignInException("server " + server.name() + ": the browser did not come back within "
                        + wait.toSeconds() + " s; run the command again to start over");
            } catch (ExecutionException e) {
                throw new SignInException(e.getCause().getMessage());
            }
            if (!state.equals(back.get("state"))) {
                throw new SignInException("server " + server.name() + ": the browser came back from another sign-in"
                        + " (its state does not match); run the command again");
            }
            // RFC 9207: the issuer the answer names, when it names one or said it would, is exactly the one asked
            String named = back.get("iss");
            if (named != null ? !named.equals(issuer.toString())
                    : metadata.path("authorization_response_iss_parameter_supported").asBoolean(false)) {
                throw new SignInException("server " + server.name() + ": the browser came back from "
                        + (named == null ? "an answer that names no issuer" : "another issuer (" + named + ")")
                        + ", not from " + issuer + "; run the command again");
            }
            if (back.containsKey("error")) {
                throw new SignInException("server " + server.name() + ": the authorization server did not sign you in: "
                        + back.get("error") + (back.containsKey("error_description") ? " (" + back.get("error_description") + ")" : ""));
            }
            if (back.get("code") == null) {
                throw new SignInException("server " + server.name() + ": the browser came back without a code");
            }
            Map<String, String> form = new LinkedHashMap<>();
            form.put("grant_type", "authorization_code");
            form.put("code", back.get("code"));
            form.put("redirect_uri", redirect.toString());
            form.put("code_verifier", verifier);
            form.put("resource", resource.toString());
            Instant asked = clock.instant();
            OAuthDiscovery.Answer answer = discovery.postForm(tokenEndpoint, form,
                    authenticate(form, client.id(), client.secret(), client.auth()), "token endpoint");
            if (!answer.ok() || !answer.body().path("access_token").isTextual()) {
                throw new SignInException("server " + server.name() + ": its authorization server refused the sign-in's"
                        + " code (HTTP " + answer.status() + (answer.error() == null ? "" : ", " + answer.error()) + ")");
            }
            JsonNode tokens = answer.body();
            String access = tokens.get("access_token").asText();
            SignIns.SignIn signIn = new SignIns.SignIn(server.name(), resource, issuer, tokenEndpoint, client.id(),
                    client.secret(), client.auth(), tokens.path("refresh_token").isTextual() ? tokens.get("refresh_token").asText() : null,
                    access, asked.plusSeconds(tokens.path("expires_in").asLong(3600)), account(tokens), asked, scope);
            store.save(server.url(), signIn);
            return new SignIns.State(signIn.account(), issuer, asked);
        } finally {
            listener.stop(0);
        }
    }

    /** The server's challenge to a request without credentials: its WWW-Authenticate, or null when it did not ask. */
    private String challenge() {
        ObjectNode initialize = json.createObjectNode();
        initialize.put("jsonrpc", "2.0");
        initialize.put("id", 1);
        initialize.put("method", "initialize");
        ObjectNode params = initialize.putObject("params");
        params.put("protocolVersion", "2025-11-25");
        params.putObject("capabilities");
        params.putObject("clientInfo").put("name", "execache").put("version", "sign-in");
        HttpResponse<String> answer = discovery.send(HttpRequest.newBuilder(server.url()).timeout(timeout)
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(initialize.toString())), "MCP endpoint");
        return answer.statusCode() == 401 ? answer.headers().firstValue("www-authenticate").orElse("") : null;
    }

    /** The resource the tokens are for: as the metadata names it, which must be the server's own origin. */
    private URI resource(JsonNode protectedResource) {
        if (!protectedResource.path("resource").isTextual()) {
            return server.url();
        }
        URI named = URI.create(protectedResource.get("resource").asText());
        if (!Objects.equals(origin(named), origin(server.url()))) {
            throw new SignInException("server " + server.name() + ": its protected-resource metadata is for "
                    + UrlServerSettings.withoutQuery(named) + ", not for the server; execache does not sign in there");
        }
        return named;
    }

    private static String origin(URI url) {
        return (url.getScheme() + "://" + url.getRawAuthority()).toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * The scope the entry names, else the one the challenge asks for together with the one the sign-in kept asked
     * for (a server that wants more scope for some requests keeps wanting the first), else every scope the resource
     * names.
     */
    private String scope(String challenge, JsonNode protectedResource) {
        if (server.clientCredentials() != null && server.clientCredentials().scope() != null) {
            return server.clientCredentials().scope();
        }
        String asked = OAuthDiscovery.scope(challenge);
        if (asked != null) {
            SignIns.SignIn kept = store.find(server.url());
            return union(kept == null ? null : kept.scope(), asked);
        }
        JsonNode supported = protectedResource.path("scopes_supported");
        if (supported.isArray() && !supported.isEmpty()) {
            StringBuilder scopes = new StringBuilder();
            supported.forEach(scope -> scopes.append(scopes.length() == 0 ? "" : " ").append(scope.asText()));
            return scopes.toString();
        }
        return null;
    }

    /** The scopes of {@code had} (may be null), then those of {@code more} it lacks, space-separated. */
    static String union(String had, String more) {
        LinkedHashSet<String> scopes = new LinkedHashSet<>();
        for (String scope : ((had == null ? "" : had) + " " + more).trim().split("\\s+")) {
            scopes.add(scope);
        }
        return String.join(" ", scopes);
    }

    private record Client(String id, String secret, String auth) {
    }

    /**
     * Puts the client's id (and secret, for {@code client_secret_post}) in {@code form}; returns the
     * headers that carry them for {@code client_secret_basic} (RFC 6749 2.3.1).
     */
    static Map<String, String> authenticate(Map<String, String> form, String id, String secret, String method) {
        if (secret == null || method.equals("none")) {
            form.put("client_id", id);
            return Map.of();
        }
        if (method.equals("client_secret_post")) {
            form.put("client_id", id);
            form.put("client_secret", secret);
            return Map.of();
        }
        String pair = OAuthDiscovery.encode(id) + ":" + OAuthDiscovery.encode(secret);
        return Map.of("Authorization", "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * The client the entry names, else one registered now (RFC 7591). A client id that is an https URL names a client
     * ID metadata document: it is the client where the authorization server takes such documents
     * ({@code client_id_metadata_document_supported}), and elsewhere execache registers itself.
     */
    private Client client(JsonNode metadata, URI redirect) {
        UrlServerSettings.ClientCredentials configured = server.clientCredentials();
        if (configured != null && (!metadataDocument(configured.clientId())
                || metadata.path("client_id_metadata_document_supported").asBoolean(false))) {
            return new Client(configured.clientId(), null, "none");
        }
        if (!metadata.path("registration_endpoint").isTextual()) {
            throw new SignInException("server " + server.name() + ": its authorization server offers no client"
                    + " registration; give the server's entry oauth.client_id, a client registered there with the"
                    + " redirect URI http://127.0.0.1/callback (any port)");
        }
        URI endpoint = URI.create(metadata.get("registration_endpoint").asText());
        ObjectNode registration = json.createObjectNode();
        registration.put("client_name", "execache");
        registration.putArray("redirect_uris").add(redirect.toString());
        registration.putArray("grant_types").add("authorization_code").add("refresh_token");
        registration.putArray("response_types").add("code");
        registration.put("token_endpoint_auth_method", "none");
        registration.put("application_type", "native");
        OAuthDiscovery.Answer answer = discovery.postJson(endpoint, registration, "client registration");
        if (!answer.ok() || !answer.body().path("client_id").isTextual()) {
            throw new SignInException("server " + server.name() + ": its authorization server refused to register"
                    + " execache (HTTP " + answer.status() + (answer.error() == null ? "" : ", " + answer.error())
                    + "); give the server's entry oauth.client_id instead");
        }
        String secret = answer.body().path("client_secret").isTextual() ? answer.body().get("client_secret").asText() : null;
        // RFC 7591 2: the method the registration settled on, client_secret_basic when it names none
        String method = secret == null ? "none" : answer.body().path("token_endpoint_auth_method").asText("client_secret_basic");
        return new Client(answer.body().get("client_id").asText(), secret, method);
    }

    /** Whether a client id is the URL of a client ID metadata document: https, with a path. */
    static boolean metadataDocument(String clientId) {
        try {
            URI url = new URI(clientId);
            return "https".equalsIgnoreCase(url.getScheme()) && url.getHost() != null && url.getRawPath() != null
                    && url.getRawPath().length() > 1;
        } catch (URISyntaxException e) {
            return false;
        }
    }

    /**
     * Whom the sign-in names: the subject of a JWT access token or of the ID token, read without
     * checking their signature (the server checks the token; this only tells people apart), else
     * an id of this sign-in.
     */
    private String account(JsonNode tokens) {
        for (String field : new String[] {"access_token", "id_token"}) {
            String[] parts = tokens.path(field).asText("").split("\\.");
            if (parts.length == 3) {
                try {
                    JsonNode claims = json.readTree(Base64.getUrlDecoder().decode(parts[1]));
                    if (claims.path("sub").isTextual()) {
                        return claims.get("sub").asText();
                    }
                } catch (IOException | IllegalArgumentException e) {
                    // not a JWT: try the next, else an id of its own
                }
            }
        }
        byte[] id = new byte[8];
        RANDOM.nextBytes(id);
        return "sign-in-" + HexFormat.of().formatHex(id);
    }

    /** The loopback listener the browser comes back to; it answers once and hands over the query. */
    private HttpServer listen(int port, CompletableFuture<Map<String, String>> callback) {
        HttpServer listener;
        try {
            listener = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        } catch (BindException e) {
            throw new SignInException("cannot listen for the browser on 127.0.0.1:" + port + " (it is in use); give"
                    + " another --port");
        } catch (IOException e) {
            throw new SignInException("cannot listen for the browser on loopback: " + e.getMessage());
        }
        listener.createContext(CALLBACK, exchange -> {
            Map<String, String> query = new LinkedHashMap<>();
            String raw = exchange.getRequestURI().getRawQuery();
            if (raw != null) {
                for (String pair : raw.split("&")) {
                    int at = pair.indexOf('=');
                    if (at > 0) {
                        query.put(URLDecoder.decode(pair.substring(0, at), StandardCharsets.UTF_8),
                                URLDecoder.decode(pair.substring(at + 1), StandardCharsets.UTF_8));
                    }
                }
            }
            byte[] page = ("<!doctype html><title>execache</title><p>execache has your answer for server "
                    + server.name() + ". You can close this page; the terminal says whether you are signed in.")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/html; charset=utf-8");
            exchange.sendResponseHeaders(200, page.length);
            try (OutputStream body = exchange.getResponseBody()) {
                body.write(page);
            }
            callback.complete(query);
        });
        listener.start();
        return listener;
    }

    private static boolean containsText(JsonNode array, String value) {
        for (JsonNode item : array) {
            if (value.equals(item.asText())) {
                return true;
            }
        }
        return false;
    }

    private static String random(int bytes) {
        byte[] value = new byte[bytes];
        RANDOM.nextBytes(value);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(value);
    }

    /** PKCE's S256 (RFC 7636 4.2): the verifier's SHA-256, base64url without padding. */
    static String challengeOf(String verifier) {
        try {
            return Base64.getUrlEncoder().withoutPadding().encodeToString(
                    MessageDigest.getInstance("SHA-256").digest(verifier.getBytes(StandardCharsets.US_ASCII)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform must provide SHA-256", e);
        }
    }
}
