package dev.execache.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A real authorization server: {@code oidc-provider} (pinned in package.json) started by
 * {@code oauth-server.mjs} on loopback with the pinned Node 22, issuing JWT access tokens for a
 * loopback resource by client credentials (clients {@code agent-full}, {@code agent-runner},
 * {@code agent-reader}, each with the secret {@code ID-secret-0123456789}), and able to rotate its
 * signing key and to mint tokens that must be refused.
 */
final class OidcProvider implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofMinutes(1);

    private final Process node;
    private final String issuer;
    private final List<String> stderr = new CopyOnWriteArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(WAIT).build();

    private OidcProvider() throws Exception {
        Path modules = TypeScriptClient.nodeModules();
        node = new ProcessBuilder(modules.resolve(".bin/node").toString(),
                modules.getParent().resolve("oauth-server.mjs").toString())
                .directory(modules.getParent().toFile()).start();
        Thread err = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(node.getErrorStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    stderr.add(line);
                }
            } catch (IOException e) {
                // node is gone
            }
        }, "oidc-provider-err");
        err.setDaemon(true);
        err.start();
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> {
            try {
                return new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8)).readLine();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        String line = first.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        if (line == null) {
            throw new IllegalStateException("oauth-server.mjs ended before it listened:\n" + String.join("\n", stderr));
        }
        issuer = JSON.readTree(line).get("issuer").textValue();
    }

    static OidcProvider start() throws Exception {
        return new OidcProvider();
    }

    String issuer() {
        return issuer;
    }

    /** An access token for a resource, by client credentials; {@code scope} null asks for none. */
    String token(String client, String scope, String resource) throws Exception {
        StringBuilder form = new StringBuilder("grant_type=client_credentials&resource=")
                .append(URLEncoder.encode(resource, StandardCharsets.UTF_8));
        if (scope != null) {
            form.append("&scope=").append(URLEncoder.encode(scope, StandardCharsets.UTF_8));
        }
        String basic = Base64.getEncoder().encodeToString((client + ":" + client + "-secret-0123456789")
                .getBytes(StandardCharsets.UTF_8));
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(issuer + "/token")).timeout(WAIT)
                .header("Content-Type", "application/x-www-form-urlencoded").header("Authorization", "Basic " + basic)
                .POST(HttpRequest.BodyPublishers.ofString(form.toString())).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new AssertionError("the token endpoint said " + response.statusCode() + ": " + response.body());
        }
        return JSON.readTree(response.body()).get("access_token").textValue();
    }

    /** A token signed as {@code key} says (current, other, none, hmac-public), with these claims. */
    String mint(ObjectNode claims, String key) throws Exception {
        ObjectNode request = JSON.createObjectNode();
        request.set("claims", claims);
        request.put("key", key);
        return control("/test/mint", request).get("token").textValue();
    }

    /**
     * A person signs in at the provider's development pages as {@code login}, in a headless browser
     * (headless-browser.mjs) that starts at {@code authorizationUrl} and, once sent back, opens the
     * client's redirect URI; returns what the browser printed (the pages seen, the callback's status).
     */
    JsonNode signIn(String authorizationUrl, String login) throws Exception {
        Path modules = TypeScriptClient.nodeModules();
        Process browser = new ProcessBuilder(modules.resolve(".bin/node").toString(),
                modules.getParent().resolve("headless-browser.mjs").toString(), authorizationUrl, login)
                .directory(modules.getParent().toFile()).redirectErrorStream(true).start();
        String printed = new String(browser.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!browser.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            browser.destroyForcibly();
            throw new AssertionError("the headless browser did not finish: " + printed);
        }
        JsonNode result = JSON.readTree(printed.lines().reduce((first, second) -> second).orElse("{}"));
        if (result.has("error")) {
            throw new AssertionError("the headless browser failed: " + result.get("error").asText());
        }
        return result;
    }

    /** Revokes a token (RFC 7009) as its public client would. */
    void revoke(String token, String clientId) throws Exception {
        String form = "token=" + URLEncoder.encode(token, StandardCharsets.UTF_8) + "&client_id="
                + URLEncoder.encode(clientId, StandardCharsets.UTF_8);
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(issuer + "/token/revocation"))
                .timeout(WAIT).header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new AssertionError("the revocation endpoint said " + response.statusCode() + ": " + response.body());
        }
    }

    /** The provider signs with a new key from now on, and publishes only that one. */
    void rotateKey() throws Exception {
        control("/test/rotate", JSON.createObjectNode());
    }

    private JsonNode control(String path, ObjectNode body) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(issuer + path)).timeout(WAIT)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.toString()))
                .build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new AssertionError(path + " said " + response.statusCode() + ": " + response.body());
        }
        return JSON.readTree(response.body());
    }

    @Override
    public void close() throws InterruptedException {
        node.destroy();
        if (!node.waitFor(30, TimeUnit.SECONDS)) {
            node.destroyForcibly();
        }
    }
}
