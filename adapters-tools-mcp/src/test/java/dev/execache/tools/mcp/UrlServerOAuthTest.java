package dev.execache.tools.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.core.CapturedLog;
import dev.execache.core.MutableClock;
import dev.execache.core.ToolResult;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A url server that wants an OAuth token, got machine to machine with client credentials: the
 * HTTP lab server is its own authorization server (protected-resource and authorization server
 * metadata, a token endpoint).
 */
class UrlServerOAuthTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);
    private static final String SECRET = "s3cret-9e2a-never-shown";
    private static HttpLab lab;

    private final List<McpToolCatalog> catalogs = new ArrayList<>();
    private final MutableClock clock = new MutableClock();

    @BeforeAll
    static void startLab() throws IOException {
        lab = HttpLab.start("--era", "2025", "--oauth", "client-7:" + SECRET);
    }

    @AfterAll
    static void stopLab() throws InterruptedException {
        lab.close();
    }

    @AfterEach
    void closeCatalogs() {
        catalogs.forEach(McpToolCatalog::close);
    }

    private McpToolCatalog catalog(String method, String secret) {
        UrlServerSettings settings = new UrlServerSettings("secured", lab.url(), Map.of(), true,
                new UrlServerSettings.ClientCredentials("client-7", "${LAB_SECRET}", "tools.read", method),
                Map.of("LAB_SECRET", secret));
        McpToolCatalog catalog = new McpToolCatalog(List.of(settings), CALL_TIMEOUT, Duration.ofHours(1), line -> { },
                clock).start();
        catalogs.add(catalog);
        return catalog;
    }

    private static JsonNode answer(ToolResult result) throws IOException {
        assertThat(result.isError()).as(result.json()).isFalse();
        return JSON.readTree(JSON.readTree(result.json()).at("/content/0/text").textValue());
    }

    private static String last(JsonNode array) {
        return array.get(array.size() - 1).asText();
    }

    @Test
    void clientSecretBasicGetsATokenFoundThroughTheMetadataAndNeverLogsTheSecret() throws IOException {
        List<String> logged;
        JsonNode log;
        try (CapturedLog captured = new CapturedLog()) {
            McpToolCatalog catalog = catalog("client_secret_basic", SECRET);
            answer(catalog.call("secured__get_count", Map.of()));
            log = answer(catalog.call("secured__oauth_log", Map.of()));
            logged = captured.lines();
        }

        assertThat(last(log.get("methods"))).isEqualTo("client_secret_basic");
        assertThat(last(log.get("resources"))).isEqualTo(lab.url().toString());
        assertThat(last(log.get("scopes"))).isEqualTo("tools.read");
        assertThat(String.join("\n", logged)).doesNotContain(SECRET).doesNotContain("at-");
    }

    @Test
    void clientSecretPostSendsTheCredentialsInTheForm() throws IOException {
        McpToolCatalog catalog = catalog("client_secret_post", SECRET);

        JsonNode log = answer(catalog.call("secured__oauth_log", Map.of()));

        assertThat(last(log.get("methods"))).isEqualTo("client_secret_post");
    }

    @Test
    void aTokenIsKeptAndRenewedBeforeItExpires() throws IOException {
        McpToolCatalog catalog = catalog("client_secret_basic", SECRET);
        int first = answer(catalog.call("secured__oauth_log", Map.of())).get("issued").intValue();

        int kept = answer(catalog.call("secured__oauth_log", Map.of())).get("issued").intValue();
        clock.advance(Duration.ofSeconds(3600 - 30));
        int renewed = answer(catalog.call("secured__oauth_log", Map.of())).get("issued").intValue();

        assertThat(kept).isEqualTo(first);
        assertThat(renewed).isEqualTo(first + 1);
    }

    @Test
    void aWrongSecretIsRefusedNamingTheClientButNotTheSecret() throws IOException {
        String wrong = "wrong-41ff-never-shown";
        McpToolCatalog catalog = catalog("client_secret_basic", wrong);

        ToolResult refused = catalog.call("secured__get_count", Map.of());

        assertThat(refused.isError()).isTrue();
        String text = JSON.readTree(refused.json()).at("/content/0/text").textValue();
        assertThat(text).contains("refused the client credentials of client-7 (HTTP 401, invalid_client)")
                .doesNotContain(wrong);
    }

    @Test
    void aServerReachedAsEachPersonRefusesACallForNobodyAndSaysWhyTheProviderRefusedAnExchange() throws IOException {
        UrlServerSettings settings = new UrlServerSettings("secured", lab.url(), Map.of(), true,
                new UrlServerSettings.ClientCredentials("client-7", "${LAB_SECRET}", null, null),
                Map.of("LAB_SECRET", SECRET), false, UrlServerSettings.Identity.EXCHANGE);
        McpToolCatalog catalog = new McpToolCatalog(List.of(settings), CALL_TIMEOUT, Duration.ofHours(1), line -> { },
                clock).start();
        catalogs.add(catalog);
        String personToken = "person-token-5d1c-never-shown";

        ToolResult forNobody = catalog.call("secured__get_count", Map.of());
        ToolResult refused;
        List<String> logged;
        try (CapturedLog captured = new CapturedLog()) {
            // the lab's token endpoint takes client credentials only: an exchange is refused as a client it does not know
            refused = catalog.call("secured__get_count", Map.of(), null, null,
                    new dev.execache.core.spi.ToolCatalog.Person("alice", personToken));
            logged = captured.lines();
        }

        assertThat(catalog.perPerson()).containsExactly("secured");
        assertThat(forNobody.isError()).isTrue();
        assertThat(JSON.readTree(forNobody.json()).at("/content/0/text").textValue())
                .contains("server secured is reached as each agent's own person (identity: exchange), and this call is"
                        + " made for nobody: call it through serve --http with OAuth");
        assertThat(refused.isError()).isTrue();
        String text = JSON.readTree(refused.json()).at("/content/0/text").textValue();
        assertThat(text).contains("server secured: the identity provider refused execache's client client-7 for"
                + " exchanging tokens (HTTP 401, invalid_client)").doesNotContain(personToken).doesNotContain(SECRET);
        assertThat(String.join("\n", logged)).doesNotContain(personToken).doesNotContain(SECRET);
        assertThat(catalog.servers().get(0).state()).as("the server stays up for the other people")
                .isEqualTo(dev.execache.core.spi.ToolCatalog.ServerStatus.State.UP);
    }
}
