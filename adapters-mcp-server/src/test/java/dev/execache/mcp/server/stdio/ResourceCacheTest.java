package dev.execache.mcp.server.stdio;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.StoreGuard;
import dev.execache.core.CachePolicy;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.spi.Counter;
import dev.execache.gateway.Downstream;
import dev.execache.gateway.Gateway;
import dev.execache.gateway.GatewayPolicy;
import dev.execache.mcp.server.RawMcpClient;
import dev.execache.gateway.ServeTools;
import dev.execache.mcp.server.ServeFixture;
import dev.execache.tools.mcp.DownstreamSettings;
import dev.execache.tools.mcp.HttpLab;
import dev.execache.tools.mcp.McpToolCatalog;
import dev.execache.tools.mcp.UrlServerSettings;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Resource reads and prompts through serve are cached by the policy of read-only tool calls: in-process serves on
 * stdio (the raw client) in front of the tests' lab servers (LAB_FEATURES=1; its counters say how often they were
 * read), all on one memory store and the test's clock, so that a TTL passes without waiting. One serve per server
 * configuration: servers listing the same URIs behind one serve would all be read from the first.
 */
class ResourceCacheTest {
    private static final String CACHE = "/_meta/dev.execache~1cache";

    @TempDir
    static Path dir;

    private static ServeFixture fixture;
    private static final List<Serve> serves = new ArrayList<>();
    /** lab: its writes keep its reads (invalidate_on_write: none); reads kept 120 s by a rule, prompts not cached. */
    private static Serve lab;
    /** ledger: a lab whose writes remove its reads; everything cached by the default rule. */
    private static Serve ledger;
    /** off: cache: false. */
    private static Serve off;
    /** lab again, on the same store: other credentials (LAB_ACCOUNT), and the same configuration as lab's. */
    private static Serve otherAccount;
    private static Serve sameConfig;
    /** A url server of the 2026-07-28 era: reads say ttlMs 30000 (lab://counter/live: 0), cacheScope private. */
    private static Serve modern;
    private static HttpLab modernLab;

    /** One serve in front of one server, and a client of it. */
    private record Serve(McpToolCatalog catalog, McpStdioServer server, RawMcpClient client) {
        JsonNode read(String uri) {
            return client.request("resources/read", Map.of("uri", uri));
        }

        JsonNode read(String uri, Map<String, Object> meta) {
            return client.request("resources/read", Map.of("uri", uri, "_meta", meta));
        }

        JsonNode readModern(String uri) {
            return client.request("resources/read", Map.of("uri", uri, "_meta", Map.of(
                    "io.modelcontextprotocol/protocolVersion", "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities", Map.of())));
        }
    }

    private static Serve serve(DownstreamSettings settings, GatewayPolicy.Server server, List<ToolCacheRule> rules)
            throws IOException {
        GatewayPolicy policy = new GatewayPolicy(List.of(server), rules);
        McpToolCatalog catalog = new McpToolCatalog(List.of(settings), Duration.ofSeconds(60), Duration.ofHours(1),
                line -> { }, Clock.systemUTC()).start();
        // versions of its own, as each serve has: two configurations of lab would otherwise replace each other's
        Gateway gateway = Gateway.builder(catalog, StoreGuard.of(fixture.store), new MutableToolVersions(), policy,
                CachePolicy.DEFAULTS).clock(fixture.clock).build();
        Pipe toServer = Pipe.open();
        Pipe fromServer = Pipe.open();
        McpStdioServer stdio = new McpStdioServer(ServeTools.builder(fixture.executor, fixture.serveSettings)
                .gateway(gateway).build(), "test",
                Channels.newInputStream(toServer.source()), Channels.newOutputStream(fromServer.sink()),
                Duration.ofSeconds(5));
        RawMcpClient client = new RawMcpClient(Channels.newOutputStream(toServer.sink()),
                Channels.newInputStream(fromServer.source()));
        client.initialize();
        Serve serve = new Serve(catalog, stdio, client);
        serves.add(serve);
        return serve;
    }

    private static Serve lab(String name, boolean invalidateOnWrite, boolean cache, Map<String, String> env,
            List<ToolCacheRule> rules) throws IOException {
        Map<String, String> features = new HashMap<>(env);
        features.put("LAB_FEATURES", "1");
        DownstreamSettings settings = Downstream.lab(name, true, features);
        return serve(settings, new GatewayPolicy.Server(name, invalidateOnWrite, true, true, cache, null), rules);
    }

    @BeforeAll
    static void start() throws IOException {
        fixture = new ServeFixture(dir, Map.of());
        List<ToolCacheRule> labRules = List.of(ToolCacheRule.cache("lab__resources/read", Duration.ofSeconds(120), 100),
                ToolCacheRule.never("lab__prompts/get"));
        lab = lab("lab", false, true, Map.of(), labRules);
        ledger = lab("ledger", true, true, Map.of(), List.of());
        off = lab("off", true, false, Map.of(), List.of());
        otherAccount = lab("lab", false, true, Map.of("LAB_ACCOUNT", "b"), labRules);
        sameConfig = lab("lab", false, true, Map.of(), labRules);
        modernLab = HttpLab.start("--era", "2026", "--features", "--read-ttl-ms", "30000");
        UrlServerSettings url = new UrlServerSettings("modern", modernLab.url(), Map.of(), true);
        modern = serve(url, new GatewayPolicy.Server(url.name(), true, true), List.of());
    }

    @AfterAll
    static void stop() throws InterruptedException {
        for (Serve serve : serves) {
            serve.server().close();
            serve.catalog().close();
        }
        if (modernLab != null) {
            modernLab.close();
        }
    }

    private static String text(JsonNode response) {
        return response.at("/result/contents/0/text").textValue();
    }

    private static String status(JsonNode response) {
        return response.at("/result" + CACHE + "/status").textValue();
    }

    private static long removedByResource() {
        return fixture.store.counters().totals().getOrDefault(Counter.INVALIDATED_BY_RESOURCE, 0L);
    }

    @Test
    void aSecondReadIsAHitWithTheSameContentsTextAndBinary() {
        JsonNode first = lab.read("lab://counter/hit");
        JsonNode second = lab.read("lab://counter/hit");
        JsonNode blob = lab.read("lab://images/dot.png");
        JsonNode blobAgain = lab.read("lab://images/dot.png");

        assertThat(text(first)).isEqualTo("read 1 times");
        assertThat(status(first)).isEqualTo("miss");
        assertThat(status(second)).isEqualTo("hit");
        assertThat(second.at("/result/contents")).isEqualTo(first.at("/result/contents"));
        // the rule that names the reads sets their TTL
        assertThat(second.at("/result" + CACHE + "/freshForSeconds").asLong()).isEqualTo(120);
        assertThat(status(blobAgain)).isEqualTo("hit");
        assertThat(blobAgain.at("/result/contents/0/blob").textValue()).isEqualTo("iVBORw0KGgoA//6A");
        assertThat(blobAgain.at("/result/contents")).isEqualTo(blob.at("/result/contents"));
        // the initialize era has no cache hints
        assertThat(second.at("/result").has("ttlMs")).isFalse();
    }

    @Test
    void resourcesUpdatedRemovesThatUrisReadOnly() {
        lab.read("lab://counter/updated");
        lab.read("lab://counter/kept");
        long before = removedByResource();

        lab.client().callTool("lab__resource_changed", Map.of("uri", "lab://counter/updated"));
        Downstream.await("the read removed on notifications/resources/updated", Duration.ofSeconds(60),
                () -> removedByResource() > before);
        JsonNode updated = lab.read("lab://counter/updated");
        JsonNode kept = lab.read("lab://counter/kept");

        assertThat(status(updated)).isEqualTo("miss");
        assertThat(text(updated)).isEqualTo("read 2 times");
        assertThat(status(kept)).isEqualTo("hit");
        assertThat(text(kept)).isEqualTo("read 1 times");
        // the agent hears the server's notification as it was sent
        assertThat(lab.client().unclaimed()).anyMatch(message -> "notifications/resources/updated"
                .equals(message.path("method").textValue())
                && "lab://counter/updated".equals(message.at("/params/uri").textValue()));
    }

    @Test
    void aReadDuringWhichTheServerSaidTheResourceChangedIsNotKept() {
        // the lab sends notifications/resources/updated for this URI while it reads it, before its answer; lab's
        // writes keep its reads (invalidate_on_write: none), and its reads are cached by a rule
        JsonNode during = lab.read("lab://counter/changing");
        JsonNode after = lab.read("lab://counter/changing");

        assertThat(text(during)).isEqualTo("read 1 times");
        assertThat(during.at("/result" + CACHE).has("freshForSeconds")).isFalse();
        assertThat(status(after)).isEqualTo("miss");
        assertThat(text(after)).isEqualTo("read 2 times");
    }

    @Test
    void aResourceListChangeRemovesEveryReadOfTheServer() {
        lab.read("lab://counter/listed-a");
        lab.read("lab://counter/listed-b");
        long before = removedByResource();

        lab.client().callTool("lab__resource_changed", Map.of());
        Downstream.await("the reads removed on notifications/resources/list_changed", Duration.ofSeconds(60),
                () -> removedByResource() >= before + 2);

        assertThat(status(lab.read("lab://counter/listed-a"))).isEqualTo("miss");
        assertThat(text(lab.read("lab://counter/listed-b"))).isEqualTo("read 2 times");
    }

    @Test
    void aWriteThroughTheServersToolsRemovesItsReadsAndPromptsUnlessItKeepsThem() {
        JsonNode read = ledger.read("lab://counter/written");
        JsonNode prompt = ledger.client().request("prompts/get", Map.of("name", "ledger__greet",
                "arguments", Map.of("person", "Ada", "style", "counted")));
        JsonNode promptAgain = ledger.client().request("prompts/get", Map.of("name", "ledger__greet",
                "arguments", Map.of("person", "Ada", "style", "counted")));
        lab.read("lab://counter/not-written");

        ledger.client().callTool("ledger__increment", Map.of());
        lab.client().callTool("lab__increment", Map.of());

        assertThat(status(read)).isEqualTo("miss");
        assertThat(status(ledger.read("lab://counter/written"))).isEqualTo("miss");
        assertThat(prompt.at("/result/messages/0/content/text").textValue()).isEqualTo(
                "Greet Ada in a counted way. (get 1)");
        assertThat(status(promptAgain)).isEqualTo("hit");
        assertThat(promptAgain.at("/result/messages")).isEqualTo(prompt.at("/result/messages"));
        JsonNode promptAfter = ledger.client().request("prompts/get", Map.of("name", "ledger__greet",
                "arguments", Map.of("person", "Ada", "style", "counted")));
        assertThat(promptAfter.at("/result/messages/0/content/text").textValue()).endsWith("(get 2)");
        // lab says invalidate_on_write: none
        assertThat(status(lab.read("lab://counter/not-written"))).isEqualTo("hit");
    }

    @Test
    void rulesAndCacheFalseDecide() {
        JsonNode first = lab.client().request("prompts/get", Map.of("name", "lab__greet",
                "arguments", Map.of("person", "Bo", "style", "counted")));
        JsonNode second = lab.client().request("prompts/get", Map.of("name", "lab__greet",
                "arguments", Map.of("person", "Bo", "style", "counted")));
        off.read("lab://counter/off");
        JsonNode offAgain = off.read("lab://counter/off");

        // a rule turns lab's prompts off
        assertThat(status(second)).isEqualTo("bypass");
        assertThat(second.at("/result/messages/0/content/text").textValue()).endsWith("(get 2)");
        assertThat(first.at("/result/messages/0/content/text").textValue()).endsWith("(get 1)");
        // cache: false on the server
        assertThat(status(offAgain)).isEqualTo("bypass");
        assertThat(offAgain.at("/result" + CACHE + "/reason").textValue()).isEqualTo("caching is turned off for it");
        assertThat(text(offAgain)).isEqualTo("read 2 times");
    }

    @Test
    void aFreshAnswerIsAskedAsForToolsAndAWrongValueIsNamed() {
        lab.read("lab://counter/fresh");

        JsonNode fresh = lab.read("lab://counter/fresh", Map.of("dev.execache/cache-control", "no-cache"));
        JsonNode after = lab.read("lab://counter/fresh");
        JsonNode wrong = lab.read("lab://counter/fresh", Map.of("dev.execache/cache-control", "soon"));

        assertThat(status(fresh)).isEqualTo("miss");
        assertThat(text(fresh)).isEqualTo("read 2 times");
        assertThat(status(after)).isEqualTo("hit");
        assertThat(text(after)).isEqualTo("read 2 times");
        assertThat(wrong.at("/error/code").intValue()).isEqualTo(-32602);
        assertThat(wrong.at("/error/message").textValue()).contains("_meta.dev.execache/cache-control")
                .contains("not \"soon\"");
    }

    @Test
    void anErrorIsNeverCached() {
        JsonNode first = lab.read("lab://counter/broken");
        JsonNode second = lab.read("lab://counter/broken");

        // the server's own code and message (the SDK's client adds its prefix to the message)
        assertThat(first.at("/error/message").textValue()).endsWith("broken, read 1 times");
        assertThat(second.at("/error/message").textValue()).endsWith("broken, read 2 times");
        assertThat(second.at("/error/code").intValue()).isEqualTo(-32603);
    }

    @Test
    void onlyTheSameServerConfigurationSharesARead() {
        JsonNode first = lab.read("lab://counter/shared");

        JsonNode same = sameConfig.read("lab://counter/shared");
        JsonNode other = otherAccount.read("lab://counter/shared");

        assertThat(status(first)).isEqualTo("miss");
        assertThat(status(same)).isEqualTo("hit");
        assertThat(same.at("/result/contents")).isEqualTo(first.at("/result/contents"));
        assertThat(status(other)).isEqualTo("miss");
    }

    @Test
    void aModernServersTtlMsBoundsTheAgeAndItsHintsAreTrueOfWhatExecacheAnswers() {
        JsonNode first = modern.readModern("lab://counter/reads");
        fixture.clock.advance(Duration.ofSeconds(20));
        JsonNode hit = modern.readModern("lab://counter/reads");
        fixture.clock.advance(Duration.ofSeconds(10));
        JsonNode expired = modern.readModern("lab://counter/reads");

        // kept 30 s, as the server allows, not the cache's 5 minutes
        assertThat(status(first)).isEqualTo("miss");
        assertThat(first.at("/result" + CACHE + "/freshForSeconds").asLong()).isEqualTo(30);
        assertThat(first.at("/result/ttlMs").asLong()).isEqualTo(30_000);
        assertThat(first.at("/result/cacheScope").textValue()).isEqualTo("private");
        assertThat(status(hit)).isEqualTo("hit");
        assertThat(hit.at("/result/ttlMs").asLong()).isEqualTo(10_000);
        assertThat(hit.at("/result" + CACHE + "/ageSeconds").asLong()).isEqualTo(20);
        assertThat(status(expired)).isEqualTo("miss");
        assertThat(text(expired)).isEqualTo("read 2 times");
    }

    @Test
    void aModernReadWithTtlMsZeroIsNeverKept() {
        JsonNode first = modern.readModern("lab://counter/live");
        JsonNode second = modern.readModern("lab://counter/live");

        assertThat(text(second)).isEqualTo("read 2 times");
        assertThat(status(second)).isEqualTo("miss");
        assertThat(second.at("/result" + CACHE + "/reason").textValue()).isEqualTo(
                "the server said it is stale at once (ttlMs: 0)");
        assertThat(second.at("/result/ttlMs").asLong()).isZero();
        assertThat(first.at("/result" + CACHE).has("freshForSeconds")).isFalse();
    }

    @Test
    void aModernListCarriesTheServersOwnHints() {
        JsonNode list = modern.client().request("resources/list", Map.of("_meta", Map.of(
                "io.modelcontextprotocol/protocolVersion", "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities", Map.of())));
        JsonNode legacy = lab.client().request("resources/list", Map.of("_meta", Map.of(
                "io.modelcontextprotocol/protocolVersion", "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities", Map.of())));

        // the url lab lists with its --ttl-ms (60000 by default) and public
        assertThat(list.at("/result/ttlMs").asLong()).isEqualTo(60_000);
        assertThat(list.at("/result/cacheScope").textValue()).isEqualTo("public");
        // a server of the initialize era gives no hints: stale at once
        assertThat(legacy.at("/result/ttlMs").asLong()).isZero();
    }
}
