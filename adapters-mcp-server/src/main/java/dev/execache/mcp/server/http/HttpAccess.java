package dev.execache.mcp.server.http;

import dev.execache.gateway.Json;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.Agents;
import dev.execache.core.spi.ToolCatalog;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Who may use {@code serve --http}, and with which rights: Host and Origin (DNS rebinding), static
 * bearer tokens (constant-time, never logged), the figures' own tokens, and, when configured, OAuth
 * access tokens checked by {@link AccessTokens}, with this server's Protected Resource Metadata
 * (RFC 9728) and the challenges (401, 403 insufficient_scope) that lead a client to it.
 */
final class HttpAccess {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    static final String METADATA_PATH = "/.well-known/oauth-protected-resource";
    private static final Set<String> LOOPBACK_NAMES = Set.of("localhost", "127.0.0.1", "::1", "[::1]");
    /** What a client is told to ask for when it has no token: the everyday rights, not the admin's. */
    private static final Set<Scope> ASKED = EnumSet.of(Scope.READ, Scope.RUN);

    private final List<byte[]> tokenDigests = new ArrayList<>();
    /** The agent each token's calls are counted for: its name when the token file named it, else null. */
    private final List<String> tokenAgents = new ArrayList<>();
    private final List<byte[]> figureTokenDigests = new ArrayList<>();
    private final Set<String> allowedHosts = new HashSet<>();
    private final OAuthSettings oauth;
    private final Supplier<String> ownUrl;
    private volatile AccessTokens accessTokens;

    /**
     * Who asks, and what they may do; {@code agent} null: the client's own name is used. {@code person}: the subject
     * and token of an OAuth access token, for the servers reached as each agent's person; null for a static token.
     */
    record Caller(String agent, Set<Scope> scopes, ToolCatalog.Person person) {
        Caller(String agent, Set<Scope> scopes) {
            this(agent, scopes, null);
        }

        boolean may(Scope scope) {
            return scope == null || scopes.contains(scope);
        }
    }

    /** A refused request: its status, its {@code WWW-Authenticate} (null for none) and a sentence for the body. */
    record Refusal(int status, String challenge, String message) {
    }

    /** Either who asks or why not. */
    record Decision(Caller caller, Refusal refusal) {
    }

    /**
     * @param ownUrl the URL MCP is served at, once the server listens (the resource, unless the settings name one)
     */
    HttpAccess(HttpServeSettings settings, Supplier<String> ownUrl) {
        for (HttpServeSettings.HttpToken token : settings.tokens()) {
            tokenDigests.add(sha256(token.secret()));
            tokenAgents.add(token.named() ? Agents.name(token.name()) : null);
        }
        figureTokenDigests.addAll(tokenDigests);
        for (HttpServeSettings.HttpToken token : settings.metricsTokens()) {
            figureTokenDigests.add(sha256(token.secret()));
        }
        allowedHosts.addAll(LOOPBACK_NAMES);
        if (!settings.address().isLoopbackAddress()) {
            allowedHosts.add(settings.address().getHostAddress().toLowerCase(Locale.ROOT));
        }
        settings.allowedHosts().forEach(host -> allowedHosts.add(host.toLowerCase(Locale.ROOT)));
        if (settings.oauth() != null && settings.oauth().resource() != null) {
            allowedHosts.add(settings.oauth().resource().getHost().toLowerCase(Locale.ROOT));
        }
        this.oauth = settings.oauth();
        this.ownUrl = ownUrl;
    }

    /** Reads the issuer's metadata and keys once the server listens, so that a wrong issuer shows at start. */
    void start() {
        if (oauth != null) {
            Thread thread = new Thread(() -> tokens().prepare(), "execache-oauth-metadata");
            thread.setDaemon(true);
            thread.start();
        }
    }

    boolean oauth() {
        return oauth != null;
    }

    /** Whether the dashboard must ask a person for a token before it reads the figures. */
    boolean figuresAskForToken() {
        return !figureTokenDigests.isEmpty() || oauth != null;
    }

    /** The resource tokens must be for (RFC 8707), canonical. */
    URI resource() {
        return oauth.resource() != null ? oauth.resource() : OAuthSettings.canonical(URI.create(ownUrl.get()));
    }

    /** Where this server's Protected Resource Metadata is, for the resource's path (RFC 9728 section 3.1). */
    String metadataUrl() {
        URI resource = resource();
        String path = resource.getRawPath() == null ? "" : resource.getRawPath();
        return resource.getScheme() + "://" + resource.getRawAuthority() + METADATA_PATH + path;
    }

    /** Whether a path is one the metadata is answered at: the well-known path, alone or with the resource's path. */
    boolean isMetadataPath(String path) {
        return oauth != null && (path.equals(METADATA_PATH) || path.equals(METADATA_PATH + resource().getRawPath()));
    }

    /** RFC 9728's document: the resource, its authorization server, the scopes it knows, how tokens are sent. */
    ObjectNode metadata() {
        ObjectNode document = Json.MAPPER.createObjectNode();
        document.put("resource", resource().toString());
        document.putArray("authorization_servers").add(oauth.issuer().toString());
        ArrayNode scopes = document.putArray("scopes_supported");
        for (Scope scope : Scope.values()) {
            scopes.add(scope.value());
        }
        document.putArray("bearer_methods_supported").add("header");
        document.put("resource_name", "execache");
        return document;
    }

    /** Who calls /mcp, or a 401 (or, when the issuer cannot be read, a 503). */
    Decision callerOfMcp(String authorization) {
        if (tokenDigests.isEmpty() && oauth == null) {
            return new Decision(new Caller(null, EnumSet.allOf(Scope.class)), null);
        }
        String token = bearer(authorization);
        if (token == null) {
            return refused(null, oauth == null ? "send Authorization: Bearer TOKEN with a token this server knows"
                    : "send Authorization: Bearer TOKEN with an access token from " + oauth.issuer());
        }
        int found = indexOf(sha256(token), tokenDigests);
        if (found >= 0) {
            return new Decision(new Caller(tokenAgents.get(found), EnumSet.allOf(Scope.class)), null);
        }
        return oauthCaller(token);
    }

    /** Who reads the figures (/metrics, /dashboard.json): any token of /mcp, the figures' own, or an access token with read. */
    Decision callerOfFigures(String authorization) {
        if (!figuresAskForToken()) {
            return new Decision(new Caller(null, EnumSet.allOf(Scope.class)), null);
        }
        String token = bearer(authorization);
        if (token == null) {
            return refused(null, "send Authorization: Bearer TOKEN with a token of this server (one of /mcp's, or one "
                    + "given for the figures)" + (oauth == null ? "" : ", or an access token with " + Scope.READ.value()));
        }
        int found = indexOf(sha256(token), figureTokenDigests);
        if (found >= 0) {
            return new Decision(new Caller(null, EnumSet.of(Scope.READ)), null);
        }
        Decision decision = oauthCaller(token);
        if (decision.caller() != null && !decision.caller().may(Scope.READ)) {
            return new Decision(null, insufficient(decision.caller(), Scope.READ));
        }
        return decision;
    }

    /** A 403 for a valid token without the scope a request needs, naming it (RFC 6750 section 3.1). */
    Refusal insufficient(Caller caller, Scope needed) {
        LOG.log(Level.INFO, "refused a request of agent " + caller.agent() + " (403): it needs " + needed.value());
        Set<Scope> wanted = EnumSet.of(needed);
        wanted.addAll(caller.scopes());
        String challenge = oauth == null ? null : "Bearer error=\"insufficient_scope\", scope=\"" + values(wanted)
                + "\", resource_metadata=\"" + metadataUrl() + "\", error_description=\"this request needs the scope "
                + needed.value() + "\"";
        return new Refusal(403, challenge, "Forbidden: this request needs the scope " + needed.value());
    }

    private Decision oauthCaller(String token) {
        if (oauth == null) {
            return refused(null, "send Authorization: Bearer TOKEN with a token this server knows");
        }
        try {
            AccessTokens.Holder holder = tokens().check(token);
            return new Decision(new Caller(holder.agent(), holder.scopes(),
                    holder.agent() == null || holder.agent().isBlank() ? null : new ToolCatalog.Person(holder.agent(), token)),
                    null);
        } catch (AccessTokens.Refused e) {
            LOG.log(Level.INFO, "refused an access token (401): " + e.getMessage());
            return refused(e.getMessage(), e.getMessage());
        } catch (AccessTokens.Unavailable e) {
            LOG.log(Level.WARNING, "could not check an access token (503): " + e.getMessage());
            return new Decision(null, new Refusal(503, null, "Service Unavailable: " + e.getMessage()));
        }
    }

    private AccessTokens tokens() {
        AccessTokens built = accessTokens;
        if (built == null) {
            synchronized (this) {
                if (accessTokens == null) {
                    accessTokens = new AccessTokens(oauth, resource());
                }
                built = accessTokens;
            }
        }
        return built;
    }

    /** A 401: with OAuth, the challenge names the metadata and the scopes to ask for (and why a token failed). */
    private Decision refused(String invalidToken, String message) {
        String challenge;
        if (oauth == null) {
            challenge = "Bearer realm=\"execache\"";
        } else {
            challenge = "Bearer resource_metadata=\"" + metadataUrl() + "\", scope=\"" + values(ASKED) + "\""
                    + (invalidToken == null ? "" : ", error=\"invalid_token\", error_description=\""
                            + invalidToken.replace('"', '\'').replace('\\', '/') + "\"");
        }
        return new Decision(null, new Refusal(401, challenge, "Unauthorized: " + message));
    }

    private static String values(Set<Scope> scopes) {
        return scopes.stream().map(Scope::value).collect(Collectors.joining(" "));
    }

    private static String bearer(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return null;
        }
        String token = authorization.substring(7).strip();
        return token.isEmpty() ? null : token;
    }

    /** The index of a digest among some, looking at every one (constant time in the token). */
    private static int indexOf(byte[] given, List<byte[]> digests) {
        int found = -1;
        for (int i = 0; i < digests.size(); i++) {
            if (MessageDigest.isEqual(given, digests.get(i)) && found < 0) {
                found = i;
            }
        }
        return found;
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JVM", e);
        }
    }

    boolean hostAllowed(String hostHeader) {
        if (hostHeader == null || hostHeader.isBlank()) {
            return false;
        }
        String host = hostHeader.strip().toLowerCase(Locale.ROOT);
        if (host.startsWith("[")) {
            int end = host.indexOf(']');
            host = end < 0 ? host : host.substring(0, end + 1);
        } else if (host.indexOf(':') >= 0 && host.indexOf(':') == host.lastIndexOf(':')) {
            host = host.substring(0, host.indexOf(':'));
        }
        return allowedHosts.contains(host);
    }

    boolean originAllowed(String origin) {
        try {
            URI uri = new URI(origin.strip());
            return uri.getHost() != null && (uri.getScheme().equals("http") || uri.getScheme().equals("https"))
                    && allowedHosts.contains(uri.getHost().toLowerCase(Locale.ROOT));
        } catch (Exception e) {
            return false;
        }
    }
}
