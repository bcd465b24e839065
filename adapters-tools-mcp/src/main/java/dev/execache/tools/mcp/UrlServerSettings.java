package dev.execache.tools.mcp;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One downstream MCP server reached over Streamable HTTP at a URL, in the shape agent hosts use
 * for {@code mcpServers}: {@code {url: https://host/mcp, headers: {Authorization: "Bearer
 * ${GITHUB_TOKEN}"}}}. A header value may name environment variables as {@code ${VAR}}; they are
 * taken from {@link #environment} when the server is reached, never from the config file, and the
 * values are never logged or shown.
 *
 * @param name how execache names the server; its tools are offered as {@code NAME__TOOL}
 * @param url the server's MCP endpoint, http or https (TLS checked against the JVM's trust store)
 * @param headers sent with every request, as written in the config file ({@code ${VAR}} unresolved)
 * @param trustAnnotations whether the server's {@code readOnlyHint} may decide what is cached
 * @param clientCredentials OAuth client credentials (RFC 6749 4.4) for a server that asks for a
 *     token, or null for none; its secret may name variables as the headers do
 * @param environment where {@code ${VAR}} is looked up, or null for this process's environment: a
 *     resident server reaches a command's servers with that command's own
 * @param sharePublic whether its answers may be shared with every configuration of it ({@code share:
 *     public}): they do not depend on who asks. Otherwise only with identical configurations
 * @param identity as whom the server is reached: with the configured credential, or as each caller's person
 */
public record UrlServerSettings(String name, URI url, Map<String, String> headers, boolean trustAnnotations,
        ClientCredentials clientCredentials, Map<String, String> environment, boolean sharePublic, Identity identity)
        implements DownstreamSettings {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]*");
    private static final Pattern HEADER = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)}");

    /**
     * OAuth client credentials. The token endpoint is found through the server's protected-resource
     * metadata (RFC 9728) and its authorization server's metadata (RFC 8414).
     *
     * @param clientId the client's id
     * @param clientSecret the secret, possibly naming variables as {@code ${VAR}}; null for none: then the
     *     client is the one a person signs in with ({@link PersonSignIn}), not one that gets tokens itself
     * @param scope the scope asked for, or null
     * @param authMethod {@code client_secret_basic} or {@code client_secret_post}
     */
    public record ClientCredentials(String clientId, String clientSecret, String scope, String authMethod) {
        public ClientCredentials {
            if (clientId == null || clientId.isBlank()) {
                throw new IllegalArgumentException("oauth.client_id must not be blank");
            }
            if (clientSecret != null && clientSecret.isEmpty()) {
                throw new IllegalArgumentException("oauth.client_secret must not be empty");
            }
            authMethod = authMethod == null ? "client_secret_basic" : authMethod;
            if (!authMethod.equals("client_secret_basic") && !authMethod.equals("client_secret_post")) {
                throw new IllegalArgumentException("oauth.auth_method must be client_secret_basic or client_secret_post, not "
                        + authMethod);
            }
            if (clientSecret != null) {
                checkVariables(clientSecret, "oauth.client_secret");
            }
        }

        /** Names the client, never its secret. */
        @Override
        public String toString() {
            return "ClientCredentials[clientId=" + clientId + ", scope=" + scope + ", authMethod=" + authMethod + "]";
        }
    }

    /**
     * As whom a url server is reached ({@code identity:} in its entry).
     */
    public enum Identity {
        /** With what its entry configures (headers, OAuth client credentials, or the sign-in of who runs execache). */
        CONFIGURED,
        /**
         * As each caller's person: the access token they presented to {@code serve --http} is exchanged (RFC 8693)
         * with the entry's OAuth client for one meant for the server. execache's own token (client credentials)
         * lists the server's tools.
         */
        EXCHANGE;

        /** The word written in the config file. */
        public String word() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The identity a config file's word names. */
        public static Identity of(String word) {
            for (Identity identity : values()) {
                if (identity.word().equals(word)) {
                    return identity;
                }
            }
            throw new IllegalArgumentException("identity must be configured or exchange, not " + word);
        }
    }

    /** A header or secret names an environment variable that is not set. */
    public static final class UnsetVariableException extends IllegalStateException {
        private final String variable;

        UnsetVariableException(String server, String where, String variable) {
            super("server " + server + ": " + where + " names the environment variable " + variable + ", which is not set");
            this.variable = variable;
        }

        public String variable() {
            return variable;
        }
    }

    public UrlServerSettings {
        if (name == null || !NAME.matcher(name).matches() || name.contains("__")) {
            throw new IllegalArgumentException("server name '" + name + "' must be letters, digits, '-' or '_'"
                    + " (not two underscores in a row, which separate server and tool)");
        }
        Objects.requireNonNull(url, "server " + name + ": url must not be null");
        if (!"http".equalsIgnoreCase(url.getScheme()) && !"https".equalsIgnoreCase(url.getScheme())) {
            throw new IllegalArgumentException("server " + name + ": url must be http:// or https://, not " + url.getScheme());
        }
        if (url.getHost() == null) {
            throw new IllegalArgumentException("server " + name + ": url has no host");
        }
        headers = Map.copyOf(Objects.requireNonNullElse(headers, Map.of()));
        for (Map.Entry<String, String> header : headers.entrySet()) {
            if (!HEADER.matcher(header.getKey()).matches()) {
                throw new IllegalArgumentException("server " + name + ": '" + header.getKey() + "' is not a header name");
            }
            checkVariables(header.getValue(), "headers." + header.getKey());
        }
        environment = environment == null ? null : Map.copyOf(environment);
        identity = identity == null ? Identity.CONFIGURED : identity;
        if (identity == Identity.EXCHANGE) {
            if (clientCredentials == null || clientCredentials.clientSecret() == null) {
                throw new IllegalArgumentException("server " + name + ": identity: exchange needs oauth.client_id and"
                        + " oauth.client_secret, the client execache exchanges each person's token with at their"
                        + " identity provider");
            }
            if (headers.keySet().stream().anyMatch(header -> header.equalsIgnoreCase("Authorization"))) {
                throw new IllegalArgumentException("server " + name + ": identity: exchange sends each person's own"
                        + " token as Authorization; remove the Authorization header from its headers");
            }
        }
    }

    /** As the canonical constructor, reached with the configured credential. */
    public UrlServerSettings(String name, URI url, Map<String, String> headers, boolean trustAnnotations,
            ClientCredentials clientCredentials, Map<String, String> environment, boolean sharePublic) {
        this(name, url, headers, trustAnnotations, clientCredentials, environment, sharePublic, Identity.CONFIGURED);
    }

    /** Static headers, looking variables up in this process's environment. */
    public UrlServerSettings(String name, URI url, Map<String, String> headers, boolean trustAnnotations) {
        this(name, url, headers, trustAnnotations, null, null, false);
    }

    /** Private to its configuration ({@code share: private}, the default). */
    public UrlServerSettings(String name, URI url, Map<String, String> headers, boolean trustAnnotations,
            ClientCredentials clientCredentials, Map<String, String> environment) {
        this(name, url, headers, trustAnnotations, clientCredentials, environment, false);
    }

    /** The same server, shared with every configuration of it ({@code share: public}) or not. */
    public UrlServerSettings withSharePublic(boolean shared) {
        return new UrlServerSettings(name, url, headers, trustAnnotations, clientCredentials, environment, shared,
                identity);
    }

    /** The same server, reached as {@code reachedAs} says. */
    public UrlServerSettings withIdentity(Identity reachedAs) {
        return new UrlServerSettings(name, url, headers, trustAnnotations, clientCredentials, environment, sharePublic,
                reachedAs);
    }

    /** Whether the server is reached as each caller's person, whose answers are theirs alone. */
    public boolean perPerson() {
        return identity == Identity.EXCHANGE;
    }

    @Override
    public UrlServerSettings startedFor(Map<String, String> environment, Path workingDir) {
        return new UrlServerSettings(name, url, headers, trustAnnotations, clientCredentials, environment, sharePublic,
                identity);
    }

    /**
     * The headers with their variables replaced by their values (in header name order).
     *
     * @throws UnsetVariableException naming the first variable that is not set
     */
    public Map<String, String> headerValues() {
        Map<String, String> values = new LinkedHashMap<>();
        for (String header : new TreeSet<>(headers.keySet())) {
            values.put(header, resolve(headers.get(header), "headers." + header));
        }
        return values;
    }

    /** The client secret with its variables replaced, or null without one. */
    public String clientSecret() {
        return clientCredentials == null || clientCredentials.clientSecret() == null ? null
                : resolve(clientCredentials.clientSecret(), "oauth.client_secret");
    }

    /**
     * Whether the server is reached with a person's sign-in when it asks for credentials: it has no
     * Authorization header of its own and no client that gets tokens itself (client credentials).
     */
    public boolean signsIn() {
        return (clientCredentials == null || clientCredentials.clientSecret() == null) && headers.keySet().stream().noneMatch(header -> header.equalsIgnoreCase("Authorization"));
    }

    /** The variables the headers and the client secret name, each with whether it is set. */
    public Map<String, Boolean> variables() {
        Map<String, Boolean> variables = new LinkedHashMap<>();
        List<String> templates = new ArrayList<>(new TreeSet<>(headers.keySet()).stream().map(headers::get).toList());
        if (clientCredentials != null && clientCredentials.clientSecret() != null) {
            templates.add(clientCredentials.clientSecret());
        }
        for (String template : templates) {
            Matcher matcher = VARIABLE.matcher(template);
            while (matcher.find()) {
                variables.put(matcher.group(1), lookUp(matcher.group(1)) != null);
            }
        }
        return variables;
    }

    private String resolve(String template, String where) {
        Matcher matcher = VARIABLE.matcher(template);
        StringBuilder resolved = new StringBuilder();
        while (matcher.find()) {
            String value = lookUp(matcher.group(1));
            if (value == null) {
                throw new UnsetVariableException(name, where, matcher.group(1));
            }
            matcher.appendReplacement(resolved, Matcher.quoteReplacement(value));
        }
        matcher.appendTail(resolved);
        return resolved.toString();
    }

    private String lookUp(String variable) {
        return environment != null ? environment.get(variable) : System.getenv(variable);
    }

    private static void checkVariables(String template, String where) {
        if (template == null) {
            throw new IllegalArgumentException(where + " must be a string");
        }
        String rest = VARIABLE.matcher(template).replaceAll("");
        if (rest.contains("${")) {
            throw new IllegalArgumentException(where + " has a '${' that is not a variable such as ${GITHUB_TOKEN}");
        }
    }

    /**
     * How the server is reached, as a one-way digest (128 bits, hex) of everything that can change
     * its answers: the whole URL (a query may name a tenant), each header's name (lower case, as
     * HTTP compares them) and resolved value, and the OAuth client's id, resolved secret and scope.
     * Identical configurations have the same identity, any difference gives another; no value can
     * be read back from it. Each tool's version includes it, so answers are kept per credential.
     *
     * @param key keys the digest (HMAC-SHA256) so that only holders of the key can test a guessed
     *     credential against it; null or empty for a plain SHA-256
     * @throws UnsetVariableException when a header or the secret names a variable that is not set
     */
    @Override
    public String identity(byte[] key) {
        return identity(key, null);
    }

    /**
     * As {@link #identity(byte[])}, for the person a sign-in names: each person's answers are their own.
     *
     * @param account the account a person's sign-in names ({@link SignIns.State#account}), or null for none
     */
    public String identity(byte[] key, String account) {
        if (sharePublic) {
            return null;
        }
        Map<String, Object> reached = new TreeMap<>();
        reached.put("kind", "url");
        reached.put("url", url.normalize().toString());
        Map<String, String> values = new TreeMap<>();
        headerValues().forEach((header, value) -> values.put(header.toLowerCase(Locale.ROOT), value));
        reached.put("headers", values);
        if (clientCredentials != null) {
            Map<String, Object> oauth = new TreeMap<>();
            oauth.put("clientId", clientCredentials.clientId());
            oauth.put("clientSecret", clientSecret());
            oauth.put("scope", clientCredentials.scope());
            reached.put("oauth", oauth);
        }
        if (account != null) {
            reached.put("account", account);
        }
        if (identity != Identity.CONFIGURED) {
            reached.put("identity", identity.word());
        }
        return ServerIdentity.of(name, reached, key);
    }

    /** Names the server, its URL without query and its header names, never a header's value. */
    @Override
    public String toString() {
        return "UrlServerSettings[name=" + name + ", url=" + withoutQuery(url) + ", headers=" + new TreeSet<>(headers.keySet())
                + ", trustAnnotations=" + trustAnnotations + ", clientCredentials=" + clientCredentials
                + ", identity=" + identity.word() + "]";
    }

    /** The URL without its query and user info, which may hold credentials: what logs and messages show. */
    public static String withoutQuery(URI url) {
        return url.getScheme() + "://" + url.getHost() + (url.getPort() < 0 ? "" : ":" + url.getPort())
                + Objects.requireNonNullElse(url.getRawPath(), "");
    }
}
