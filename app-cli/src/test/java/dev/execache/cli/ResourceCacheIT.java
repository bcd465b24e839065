package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.gateway.Downstream;
import dev.execache.tools.mcp.HttpLab;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Resource reads and prompts through {@code execache serve} are cached, as the official TypeScript client
 * (resource-cache-client.mjs) sees them: on stdio in the initialize era in front of the command lab (a second read a
 * hit with the same contents, a rule that turns prompts off, {@code notifications/resources/updated} making the next
 * read a miss), and over HTTP in the 2026-07-28 era in front of the url lab of that era (its {@code ttlMs} bounds how
 * long a read is kept, and what execache says of it; {@code ttlMs: 0} is never kept). One serve each.
 */
class ResourceCacheIT {
    private static final Map<String, String> NO_POOL = Map.of("EXECACHE_WARM_POOL", "0");

    @TempDir
    static Path dir;

    private static HttpLab modernLab;
    private static HttpServeProcess http;

    @BeforeAll
    static void start() throws Exception {
        String lab = Downstream.nodeModules().resolveSibling("lab-server.mjs").toString();
        Files.writeString(dir.resolve("lab.yaml"), """
                servers:
                  lab:
                    command: node
                    args: ["%s"]
                    cache: true  # a local server's reads are asked every time unless it says to cache them
                    env: {LAB_FEATURES: "1"}
                    invalidate_on_write: none
                tool_calls:
                  rules:
                    - {tool: "lab__prompts/get", enabled: false}
                """.formatted(lab));
        modernLab = HttpLab.start("--era", "2026", "--features", "--read-ttl-ms", "30000");
        Path modern = Files.writeString(dir.resolve("modern.yaml"), """
                servers:
                  modern:
                    url: %s
                """.formatted(modernLab.url()));
        http = HttpServeProcess.start(NO_POOL, "--store", "memory", "--config", modern.toString(), "--http", "0");
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (http != null) {
            http.close();
        }
        if (modernLab != null) {
            modernLab.close();
        }
    }

    @Test
    void onStdioASecondReadIsAHitARuleDecidesAndAnUpdateMakesTheNextReadAMiss() throws Exception {
        List<String> arguments = new ArrayList<>(List.of("legacy", "stdio", ServeProcess.java()));
        arguments.addAll(ServeProcess.command("resource-cache-stdio", List.of("--store", "memory", "--config",
                dir.resolve("lab.yaml").toString())));

        JsonNode out = TypeScriptClient.runScript("resource-cache-client.mjs", arguments, NO_POOL);

        assertThat(out.has("thrown")).as(out.path("thrown").asText()).isFalse();
        assertThat(out.at("/first/contents/0/text").textValue()).isEqualTo("read 1 times");
        assertThat(out.at("/first/cache/status").textValue()).isEqualTo("miss");
        assertThat(out.at("/second/cache/status").textValue()).isEqualTo("hit");
        assertThat(out.at("/second/contents")).isEqualTo(out.at("/first/contents"));
        // a rule turns the lab's prompts off: asked each time
        assertThat(out.at("/promptAgain/cache/status").textValue()).isEqualTo("bypass");
        assertThat(out.at("/promptAgain/contents/0/content/text").textValue()).endsWith("(get 2)");
        // the agent hears the server's notification; by then the read it names is gone
        assertThat(out.at("/updated/uri").textValue()).isEqualTo("lab://counter/reads");
        assertThat(out.at("/afterUpdate/cache/status").textValue()).isEqualTo("miss");
        assertThat(out.at("/afterUpdate/contents/0/text").textValue()).isEqualTo("read 2 times");
        // the initialize era has no cache hints
        assertThat(out.at("/second/ttlMs").isNull()).isTrue();
    }

    @Test
    void overHttpAModernServersTtlMsBoundsHowLongAReadIsKept() throws Exception {
        JsonNode out = TypeScriptClient.runScript("resource-cache-client.mjs", List.of("pinned", "http", http.url()),
                Map.of());

        assertThat(out.has("thrown")).as(out.path("thrown").asText()).isFalse();
        assertThat(out.get("era").textValue()).isEqualTo("modern");
        assertThat(out.at("/second/cache/status").textValue()).isEqualTo("hit");
        assertThat(out.at("/second/contents")).isEqualTo(out.at("/first/contents"));
        // kept as long as the server allows (30 s), not the cache's 5 minutes; the hints say what remains
        assertThat(out.at("/first/cache/freshForSeconds").asLong()).isBetween(0L, 30L);
        assertThat(out.at("/second/cache/freshForSeconds").asLong()).isBetween(0L, 30L);
        assertThat(out.at("/second/ttlMs").asLong()).isBetween(0L, 30_000L);
        assertThat(out.at("/second/cacheScope").textValue()).isEqualTo("private");
        // ttlMs 0: asked each time
        assertThat(out.at("/liveAgain/cache/status").textValue()).isEqualTo("miss");
        assertThat(out.at("/liveAgain/contents/0/text").textValue()).isEqualTo("read 2 times");
        assertThat(out.at("/liveAgain/ttlMs").asLong()).isZero();
    }
}
