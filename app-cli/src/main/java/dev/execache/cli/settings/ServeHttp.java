package dev.execache.cli.settings;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import dev.execache.mcp.server.http.HttpServeSettings;
import dev.execache.mcp.server.http.HttpServeSettings.HttpToken;
import dev.execache.mcp.server.http.OAuthSettings;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where {@code serve --http} listens and whom it lets in: {@code --http [HOST:]PORT} (else
 * {@code serve.http} in the config file), tokens from {@code EXECACHE_HTTP_TOKEN} and
 * {@code --http-token-file} (else {@code serve.http_token_file}), extra host names from
 * {@code --http-allow-host} (else {@code serve.http_allow_hosts}); tokens that open only the figures
 * ({@code /metrics} and the dashboard's data) from {@code EXECACHE_METRICS_TOKEN} and
 * {@code --metrics-token-file} (else {@code serve.metrics_token_file}); OAuth access tokens from the
 * authorization server {@code --oauth-issuer} (else {@code EXECACHE_OAUTH_ISSUER}, else
 * {@code serve.oauth_issuer}) for the resource {@code --oauth-resource} (else
 * {@code EXECACHE_OAUTH_RESOURCE}, else {@code serve.oauth_resource}; by default the URL it serves at).
 */
public final class ServeHttp {
    public static final String TOKEN_VARIABLE = "EXECACHE_HTTP_TOKEN";
    public static final String METRICS_TOKEN_VARIABLE = "EXECACHE_METRICS_TOKEN";
    public static final String OAUTH_ISSUER_VARIABLE = "EXECACHE_OAUTH_ISSUER";
    public static final String OAUTH_RESOURCE_VARIABLE = "EXECACHE_OAUTH_RESOURCE";
    private static final Set<String> KEYS = Set.of("http", "http_token_file", "http_allow_hosts", "metrics_token_file",
            "oauth_issuer", "oauth_resource");

    private ServeHttp() {
    }

    /**
     * The HTTP settings, or null to serve on stdio.
     *
     * @param configFile the config file, when there is one
     */
    public static HttpServeSettings resolve(String listen, Path tokenFile, List<String> allowHosts,
            Map<String, String> environment, Path configFile, Path workingDir, Duration drainLimit) {
        return resolve(listen, tokenFile, allowHosts, null, environment, configFile, workingDir, drainLimit);
    }

    /**
     * The HTTP settings, or null to serve on stdio.
     *
     * @param metricsTokenFile tokens that open only the figures; null for none (or the config file's)
     * @param configFile the config file, when there is one
     */
    public static HttpServeSettings resolve(String listen, Path tokenFile, List<String> allowHosts, Path metricsTokenFile,
            Map<String, String> environment, Path configFile, Path workingDir, Duration drainLimit) {
        return resolve(listen, tokenFile, allowHosts, metricsTokenFile, null, null, environment, configFile, workingDir,
                drainLimit);
    }

    /**
     * The HTTP settings, or null to serve on stdio.
     *
     * @param oauthIssuer the authorization server whose access tokens are taken; null for none (or the
     *     environment's, or the config file's)
     * @param oauthResource this server's resource identifier, which tokens must be for; null: the
     *     environment's, the config file's, or the URL it serves at
     * @param configFile the config file, when there is one
     */
    public static HttpServeSettings resolve(String listen, Path tokenFile, List<String> allowHosts, Path metricsTokenFile,
            String oauthIssuer, String oauthResource, Map<String, String> environment, Path configFile, Path workingDir,
            Duration drainLimit) {
        JsonNode serve = serveSection(configFile);
        String issuer = first(oauthIssuer, environment.get(OAUTH_ISSUER_VARIABLE), serve.path("oauth_issuer"));
        String resource = first(oauthResource, environment.get(OAUTH_RESOURCE_VARIABLE), serve.path("oauth_resource"));
        if (listen == null && serve.path("http").isValueNode()) {
            listen = serve.get("http").asText();
        }
        if (listen == null) {
            if (tokenFile != null || !allowHosts.isEmpty() || metricsTokenFile != null || oauthIssuer != null
                    || oauthResource != null) {
                throw new UsageException("--http-token-file, --http-allow-host, --metrics-token-file, --oauth-issuer and "
                        + "--oauth-resource go with --http [HOST:]PORT");
            }
            return null;
        }
        if (metricsTokenFile == null && serve.path("metrics_token_file").isTextual()) {
            metricsTokenFile = configFile.toAbsolutePath().getParent().resolve(serve.get("metrics_token_file").textValue());
        }
        if (tokenFile == null && serve.path("http_token_file").isTextual()) {
            tokenFile = configFile.toAbsolutePath().getParent().resolve(serve.get("http_token_file").textValue());
        }
        Set<String> hosts = new LinkedHashSet<>(allowHosts);
        if (hosts.isEmpty() && serve.path("http_allow_hosts").isArray()) {
            serve.get("http_allow_hosts").forEach(host -> hosts.add(host.asText()));
        }
        List<HttpToken> tokens = new ArrayList<>();
        String fromEnvironment = environment.get(TOKEN_VARIABLE);
        try {
            if (fromEnvironment != null && !fromEnvironment.isBlank()) {
                tokens.add(new HttpToken(TOKEN_VARIABLE, fromEnvironment.strip()));
            }
            if (tokenFile != null) {
                tokens.addAll(readTokens(workingDir.resolve(tokenFile)));
            }
            List<HttpToken> metricsTokens = new ArrayList<>();
            String metricsFromEnvironment = environment.get(METRICS_TOKEN_VARIABLE);
            if (metricsFromEnvironment != null && !metricsFromEnvironment.isBlank()) {
                metricsTokens.add(new HttpToken(METRICS_TOKEN_VARIABLE, metricsFromEnvironment.strip()));
            }
            if (metricsTokenFile != null) {
                metricsTokens.addAll(readTokens(workingDir.resolve(metricsTokenFile), "--metrics-token-file"));
            }
            Address address = address(listen);
            return new HttpServeSettings(address.host(), address.port(), tokens, hosts,
                    HttpServeSettings.DEFAULT_MAX_BODY_BYTES, HttpServeSettings.DEFAULT_MAX_CONCURRENT,
                    HttpServeSettings.DEFAULT_IDLE_TIMEOUT, drainLimit, metricsTokens, oauth(issuer, resource));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    private record Address(InetAddress host, int port) {
    }

    /** The first of a flag, a variable and a config file's value that is given. */
    private static String first(String flag, String variable, JsonNode configured) {
        if (flag != null && !flag.isBlank()) {
            return flag.strip();
        }
        if (variable != null && !variable.isBlank()) {
            return variable.strip();
        }
        return configured.isTextual() && !configured.textValue().isBlank() ? configured.textValue().strip() : null;
    }

    /** OAuth's settings, or null without an issuer; a resource without an issuer is a mistake. */
    private static OAuthSettings oauth(String issuer, String resource) {
        if (issuer == null) {
            if (resource != null) {
                throw new UsageException("--oauth-resource goes with --oauth-issuer (the authorization server whose "
                        + "access tokens are taken)");
            }
            return null;
        }
        return OAuthSettings.of(uri("--oauth-issuer", issuer), resource == null ? null : uri("--oauth-resource", resource));
    }

    private static URI uri(String option, String text) {
        try {
            return new URI(text);
        } catch (URISyntaxException e) {
            throw new UsageException(option + ": not a URL: '" + text + "' (" + e.getReason() + ")");
        }
    }

    /** [HOST:]PORT; the host defaults to 127.0.0.1, an IPv6 host is in brackets. */
    static Address address(String listen) {
        String text = listen.strip();
        String host = "127.0.0.1";
        String port = text;
        int colon = text.lastIndexOf(':');
        if (colon >= 0) {
            host = text.substring(0, colon);
            port = text.substring(colon + 1);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
        }
        int number;
        try {
            number = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            number = -1;
        }
        if (number < 0 || number > 65535 || host.isEmpty()) {
            throw new UsageException("--http: give [HOST:]PORT, such as 8080 or 127.0.0.1:8080, not '" + listen + "'");
        }
        try {
            return new Address(InetAddress.getByName(host), number);
        } catch (UnknownHostException e) {
            throw new UsageException("--http: unknown host '" + host + "'");
        }
    }

    static List<HttpToken> readTokens(Path file) {
        return readTokens(file, "--http-token-file");
    }

    /** One token per line, optionally after a name ({@code NAME TOKEN}); # starts a comment. */
    static List<HttpToken> readTokens(Path file, String option) {
        if (!Files.isRegularFile(file)) {
            throw new UsageException(option + ": " + file + " does not exist");
        }
        try {
            Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(file);
            if (permissions.contains(PosixFilePermission.GROUP_READ) || permissions.contains(PosixFilePermission.OTHERS_READ)) {
                throw new UsageException(option + ": " + file + " can be read by others; it holds secrets: "
                        + "chmod 600 " + file);
            }
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: nothing to check
        } catch (IOException e) {
            throw new UsageException(option + ": cannot read " + file + ": " + e.getMessage());
        }
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new UsageException(option + ": cannot read " + file + ": " + e.getMessage());
        }
        List<HttpToken> tokens = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] parts = line.split("\\s+");
            if (parts.length > 2) {
                throw new UsageException(option + ": " + file + " line " + (i + 1) + ": give TOKEN or NAME TOKEN");
            }
            String name = parts.length == 2 ? parts[0] : "line " + (i + 1);
            if (!names.add(name)) {
                throw new UsageException(option + ": " + file + " line " + (i + 1) + ": the name " + name
                        + " is used twice");
            }
            try {
                tokens.add(new HttpToken(name, parts[parts.length - 1], parts.length == 2));
            } catch (IllegalArgumentException e) {
                throw new UsageException(option + ": " + file + " line " + (i + 1) + ": " + e.getMessage());
            }
        }
        if (tokens.isEmpty()) {
            throw new UsageException(option + ": " + file + " holds no token");
        }
        return tokens;
    }

    private static JsonNode serveSection(Path configFile) {
        if (configFile == null || !Files.isRegularFile(configFile)) {
            return MissingNode.getInstance();
        }
        JsonNode root;
        String text = null;
        try {
            text = Files.readString(configFile);
            root = ConfigFile.readTree(text);
        } catch (JacksonException e) {
            throw new UsageException(ParseErrors.describe(configFile, "YAML", text, e));
        } catch (IOException e) {
            throw new UsageException("cannot read config file " + configFile + ": " + e.getMessage());
        }
        JsonNode serve = root == null ? null : root.get("serve");
        if (serve == null || serve.isNull()) {
            return MissingNode.getInstance();
        }
        if (!serve.isObject()) {
            throw new UsageException(configFile + ": serve must be a mapping");
        }
        serve.fieldNames().forEachRemaining(key -> {
            if (!KEYS.contains(key)) {
                throw new UsageException(configFile + ": serve." + key + " is not a setting (known: " + String.join(", ",
                        KEYS.stream().sorted().toList()) + ")");
            }
        });
        return serve;
    }
}
