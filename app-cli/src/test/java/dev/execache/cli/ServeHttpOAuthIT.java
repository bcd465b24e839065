package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.mcp.server.RawHttp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code serve --http --oauth-issuer} as an OAuth 2.1 resource server, against a real authorization
 * server (oidc-provider, started once for the class) and the official TypeScript SDK client: the
 * metadata and challenges that lead a client to sign in, tokens checked (signature against the
 * provider's keys, issuer, audience, time), a key rotated at the provider followed, scopes enforced
 * per tool, the token's subject as the agent, and a static token beside it. One serve for the class.
 */
class ServeHttpOAuthIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String STATIC_TOKEN = "static-token-0123456789abcdef0123";
    private static final String ALL = "execache:read execache:run execache:admin";

    private static OidcProvider provider;
    private static HttpServeProcess server;
    private static String resource;
    /** Every token the tests used, none of which may appear in serve's logs. */
    private static final List<String> used = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        provider = OidcProvider.start();
        server = HttpServeProcess.start(Map.of("EXECACHE_WARM_POOL", "0", "EXECACHE_HTTP_TOKEN", STATIC_TOKEN),
                "--store", "memory", "--http", "127.0.0.1:0", "--oauth-issuer", provider.issuer());
        resource = server.url();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (server != null) {
                server.close();
                String logged = String.join("\n", server.stderr());
                for (String token : used) {
                    assertThat(logged).as("serve's log shows no token").doesNotContain(token);
                }
            }
        } finally {
            if (provider != null) {
                provider.close();
            }
        }
    }

    private static String token(String client, String scope) throws Exception {
        String token = provider.token(client, scope, resource);
        used.add(token);
        return token;
    }

    private static RawHttp.Answer post(String token, String body) throws Exception {
        Map<String, String> headers = new HashMap<>();
        if (token != null) {
            headers.put("Authorization", "Bearer " + token);
            used.add(token);
        }
        return RawHttp.post(server.port(), body, headers);
    }

    private static RawHttp.Answer call(String token, String tool, String arguments) throws Exception {
        return post(token, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":" + arguments + "}}");
    }

    private static JsonNode result(RawHttp.Answer answer) throws Exception {
        assertThat(answer.status()).as(answer.body()).isEqualTo(200);
        JsonNode json = answer.header("content-type").startsWith("text/event-stream")
                ? answer.events().get(answer.events().size() - 1) : answer.json();
        assertThat(json.has("result")).as(json.toString()).isTrue();
        return json.get("result");
    }

    /** Waits until the figures name an agent: the dashboard reads the store at most once a second. */
    private static void awaitAgent(String token, String name) {
        await().atMost(Duration.ofMinutes(1)).untilAsserted(() -> {
            RawHttp.Answer figures = RawHttp.send(server.port(), "GET", "/dashboard.json", null,
                    Map.of("Authorization", "Bearer " + token));
            assertThat(figures.status()).isEqualTo(200);
            List<String> agents = new ArrayList<>();
            figures.json().get("agents").forEach(agent -> agents.add(agent.get("name").textValue()));
            assertThat(agents).as("the agents in the figures").contains(name);
        });
    }

    private static String metadataUrl() {
        return resource.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    }

    /** Claims as the provider would issue them for this resource, valid for ten minutes. */
    private static ObjectNode claims() {
        long now = Instant.now().getEpochSecond();
        ObjectNode claims = JSON.createObjectNode();
        claims.put("iss", provider.issuer());
        claims.put("aud", resource);
        claims.put("sub", "mallory");
        claims.put("client_id", "mallory");
        claims.put("scope", ALL);
        claims.put("iat", now);
        claims.put("exp", now + 600);
        return claims;
    }

    @Test
    void protectedResourceMetadataNamesTheIssuerAndTheScopes() throws Exception {
        for (String path : List.of("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource")) {
            RawHttp.Answer answer = RawHttp.send(server.port(), "GET", path, null, Map.of());

            assertThat(answer.status()).as(path).isEqualTo(200);
            JsonNode metadata = answer.json();
            assertThat(metadata.get("resource").textValue()).isEqualTo(resource);
            assertThat(metadata.get("authorization_servers")).extracting(JsonNode::textValue)
                    .containsExactly(provider.issuer());
            assertThat(metadata.get("scopes_supported")).extracting(JsonNode::textValue)
                    .containsExactly("execache:read", "execache:run", "execache:admin");
            assertThat(metadata.get("bearer_methods_supported")).extracting(JsonNode::textValue).containsExactly("header");
        }
    }

    @Test
    void aRequestWithoutATokenIsToldWhereToSignIn() throws Exception {
        RawHttp.Answer answer = post(null, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");

        assertThat(answer.status()).isEqualTo(401);
        assertThat(answer.header("WWW-Authenticate")).isEqualTo("Bearer resource_metadata=\"" + metadataUrl()
                + "\", scope=\"execache:read execache:run\"");
    }

    @Test
    void aTokenIssuedForThisResourceIsAcceptedAndItsSubjectIsTheAgent() throws Exception {
        String token = token("agent-runner", "execache:read execache:run");

        JsonNode run = result(call(token, "execute_code", "{\"code\":\"return 6 * 7;\"}"));

        assertThat(run.get("isError").asBoolean()).as(run.toString()).isFalse();
        assertThat(run.at("/structuredContent/result").intValue()).isEqualTo(42);
        // the token's subject is the agent in the figures
        awaitAgent(token, "agent-runner");
    }

    @Test
    void tokensNotValidForThisResourceAreRefusedEachForItsReason() throws Exception {
        long now = Instant.now().getEpochSecond();
        Map<String, String> refused = new LinkedHashMap<>();
        refused.put(provider.mint(claims().put("iat", now - 1200).put("exp", now - 600), "current"), "has expired");
        refused.put(provider.mint(claims().put("nbf", now + 600), "current"), "not valid yet");
        refused.put(provider.token("agent-full", ALL, "http://127.0.0.1:1/mcp"), "not for this resource");
        refused.put(provider.mint(claims().put("iss", "http://127.0.0.1:1"), "current"), "not issued by");
        refused.put(provider.mint(claims(), "none"), "not signed");
        refused.put(provider.mint(claims(), "other"), "signature does not match");
        refused.put(provider.mint(claims(), "hmac-public"), "algorithm this server does not take");

        for (Map.Entry<String, String> token : refused.entrySet()) {
            RawHttp.Answer answer = call(token.getKey(), "cache_stats", "{}");

            assertThat(answer.status()).as(token.getValue()).isEqualTo(401);
            assertThat(answer.header("WWW-Authenticate")).as(token.getValue())
                    .startsWith("Bearer resource_metadata=\"" + metadataUrl() + "\"")
                    .contains("error=\"invalid_token\"").contains(token.getValue());
        }
        // the same claims, signed by the provider's own key, are taken: each refusal above is for its one difference
        assertThat(result(call(provider.mint(claims(), "current"), "cache_stats", "{}")).get("isError").asBoolean())
                .isFalse();
    }

    @Test
    void aKeyRotatedAtTheProviderIsFollowed() throws Exception {
        String before = token("agent-full", ALL);
        assertThat(call(before, "cache_stats", "{}").status()).isEqualTo(200);

        provider.rotateKey();
        String after = token("agent-full", ALL);

        assertThat(call(after, "cache_stats", "{}").status()).as("a token signed with the new key").isEqualTo(200);
        RawHttp.Answer old = call(before, "cache_stats", "{}");
        assertThat(old.status()).as("the provider no longer publishes the old key").isEqualTo(401);
        assertThat(old.header("WWW-Authenticate")).contains("error=\"invalid_token\"")
                .contains("signed with a key the issuer does not publish (key id ").doesNotContain("algorithm");
    }

    @Test
    void eachKindOfOperationNeedsItsScope() throws Exception {
        String reader = token("agent-reader", "execache:read");
        String runner = token("agent-runner", "execache:read execache:run");
        String full = token("agent-full", ALL);
        String none = token("agent-full", null);

        assertThat(result(post(reader, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}")).get("tools"))
                .isNotEmpty();
        assertThat(result(call(reader, "cache_stats", "{}")).get("isError").asBoolean()).isFalse();
        assertThat(RawHttp.send(server.port(), "GET", "/metrics", null, Map.of("Authorization", "Bearer " + reader))
                .status()).isEqualTo(200);
        assertForbidden(call(reader, "execute_code", "{\"code\":\"return 1;\"}"), "execache:run",
                "execache:read execache:run");
        assertForbidden(call(runner, "clear_cache", "{}"), "execache:admin", ALL);
        assertForbidden(call(runner, "invalidate_tool", "{\"tool\":\"x\"}"), "execache:admin", ALL);
        assertForbidden(post(none, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"), "execache:read",
                "execache:read");
        assertThat(RawHttp.send(server.port(), "GET", "/metrics", null, Map.of("Authorization", "Bearer " + none))
                .status()).isEqualTo(403);
        assertThat(result(post(none, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"))).isNotNull();
        assertThat(result(call(full, "clear_cache", "{}")).get("isError").asBoolean()).isFalse();
        // logged before the answer went out; read from serve's stderr by another thread
        await().atMost(Duration.ofMinutes(1)).untilAsserted(() -> assertThat(server.stderr())
                .as("who changed the shared cache is logged")
                .contains("execache: agent agent-full calls clear_cache, which changes the shared cache")
                .anyMatch(line -> line.contains("refused a request of agent agent-runner (403): it needs execache:admin")));
    }

    /** A 403 naming the scope needed; its challenge asks for that scope with those the token holds. */
    private static void assertForbidden(RawHttp.Answer answer, String needed, String challengeScope) {
        assertThat(answer.status()).as(answer.body()).isEqualTo(403);
        assertThat(answer.body()).contains("needs the scope " + needed);
        assertThat(answer.header("WWW-Authenticate")).startsWith("Bearer error=\"insufficient_scope\"")
                .contains("scope=\"" + challengeScope + "\"").contains("resource_metadata=\"" + metadataUrl() + "\"");
    }

    @Test
    void aStaticTokenKeepsWorkingBesideOAuth() throws Exception {
        JsonNode cleared = result(call(STATIC_TOKEN, "clear_cache", "{}"));

        assertThat(cleared.get("isError").asBoolean()).as(cleared.toString()).isFalse();
    }

    @Test
    void theTypeScriptSdkClientSignsInFromThe401AndCallsTools() throws Exception {
        JsonNode client = TypeScriptClient.runScript("oauth-client.mjs", List.of(resource, provider.issuer(),
                "agent-runner", "agent-runner-secret-0123456789", "execache:read execache:run"), Map.of());

        assertThat(client.has("error")).as(client.toString()).isFalse();
        List<String> requests = new ArrayList<>();
        client.get("requests").forEach(request -> requests.add(request.get("method").textValue() + " "
                + request.get("url").textValue() + " " + request.get("status").intValue()));
        assertThat(requests.subList(0, 5)).as("discovery from the 401 onwards").containsExactly(
                "POST " + resource + " 401",
                "GET " + metadataUrl() + " 200",
                "GET " + provider.issuer() + "/.well-known/oauth-authorization-server 200",
                "POST " + provider.issuer() + "/token 200",
                "POST " + resource + " 200");
        assertThat(client.get("tools")).extracting(JsonNode::textValue).contains("execute_code", "cache_stats");
        assertThat(client.get("statsIsError").booleanValue()).isFalse();
        assertThat(client.get("runIsError").booleanValue()).isFalse();
        assertThat(client.at("/run/result").intValue()).isEqualTo(42);
        assertThat(client.get("scope").textValue()).isEqualTo("execache:read execache:run");
    }

    @Test
    void aPersonSignsInThroughTheSdkClientWithPkceAndIsTheAgent() throws Exception {
        JsonNode client = TypeScriptClient.runScript("oauth-login-client.mjs", List.of(resource, "alice"), Map.of());

        assertThat(client.has("error")).as(client.toString()).isFalse();
        List<String> requests = new ArrayList<>();
        client.get("requests").forEach(request -> requests.add(request.get("method").textValue() + " "
                + request.get("url").textValue() + " " + request.get("status").intValue()));
        assertThat(requests).as("discovery from the 401, dynamic registration, then the code for a token").startsWith(
                "POST " + resource + " 401",
                "GET " + metadataUrl() + " 200",
                "GET " + provider.issuer() + "/.well-known/oauth-authorization-server 200",
                "POST " + provider.issuer() + "/reg 201");
        assertThat(requests).contains("POST " + provider.issuer() + "/token 200");
        assertThat(client.at("/authorization/codeChallengeMethod").textValue()).isEqualTo("S256");
        assertThat(client.at("/authorization/resource").textValue()).isEqualTo(resource);
        assertThat(client.at("/authorization/scope").textValue()).as("the scope the 401 names")
                .isEqualTo("execache:read execache:run");
        assertThat(client.get("browser")).extracting(JsonNode::textValue).contains("POST /interaction/ID 303");
        assertThat(client.get("runIsError").booleanValue()).isFalse();
        assertThat(client.at("/run/result").textValue()).isEqualTo("signed in");
        // the person who signed in is the agent
        awaitAgent(STATIC_TOKEN, "alice");
    }
}
