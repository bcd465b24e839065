package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.tools.mcp.HttpLab;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A url server that asks the agent, through {@code execache serve}: the split TypeScript client (asks-client.mjs) in
 * each era, on stdio and over HTTP, calls tools of the HTTP lab (http-lab-server.mjs --asks) that ask it for a
 * sampled message, a person's input and its roots, of a lab of the 2025-11-25 era (a request on the call's event
 * stream) and of one of the 2026-07-28 era (an input_required answer and a retry); its answers reach the lab and the
 * calls are never stored; on stdio the agent's roots change reaches the 2025-era lab; a 2025 agent's prompt and resource
 * read that the 2026-07-28 lab answers input_required reach it as its own requests. A tool the lab does not list is
 * called as directly, one execache left out of the list is not. Then it cancels a long sleep at the lab: the lab sees
 * the request cancelled or closed, and nothing is kept of it.
 */
class UrlServerAsksIT {
    private static final Map<String, String> NO_POOL = Map.of("EXECACHE_WARM_POOL", "0");
    /** Each run's cancelled sleep has its own length, by which the lab's record names it. */
    private static final AtomicInteger SLEEPS = new AtomicInteger(600_000);

    private static HttpLab legacyLab;
    private static HttpLab modernLab;
    private static Path config;
    private static HttpServeProcess http;

    @TempDir
    static Path dir;

    @BeforeAll
    static void start() throws Exception {
        legacyLab = HttpLab.start("--asks");
        modernLab = HttpLab.start("--era", "2026", "--asks");
        config = Files.writeString(dir.resolve("asking.yaml"), """
                servers:
                  lab:
                    url: %s
                  modern:
                    url: %s
                tool_calls:
                  rules:
                    - {tool: "*__sleep", ttl_seconds: 300}   # however fast it answers
                """.formatted(legacyLab.url(), modernLab.url()));
        http = HttpServeProcess.start(NO_POOL, "--store", "memory", "--config", config.toString(), "--http", "0");
    }

    @AfterAll
    static void stop() throws InterruptedException {
        for (AutoCloseable each : new AutoCloseable[] {http, legacyLab, modernLab}) {
            try {
                if (each != null) {
                    each.close();
                }
            } catch (Exception e) {
                // stopping what the test started
            }
        }
    }

    @ParameterizedTest(name = "a {1} server, an agent of the {0} era on {2}")
    @CsvSource({"legacy, lab, stdio", "pinned, lab, stdio", "legacy, modern, stdio", "pinned, modern, http",
            "pinned, lab, http", "legacy, lab, http", "legacy, modern, http"})
    void theServersRequestsReachTheAgentAndACancelledCallEndsAtTheServerAndIsNotKept(String mode, String server,
            String transport) throws Exception {
        JsonNode out = client(mode, server, transport);

        assertThat(out.has("thrown")).as(out.path("thrown").asText()).isFalse();
        assertThat(out.get("era").textValue()).isEqualTo(mode.equals("legacy") ? "legacy" : "modern");
        // the agent was asked what the lab asked, params unchanged, and the lab got the agent's answers
        assertThat(out.at("/asked/sampling")).hasSize(2);
        assertThat(out.at("/asked/sampling/0/messages/0/content/text").textValue()).isEqualTo("Say hi");
        assertThat(out.at("/asked/sampling/0/maxTokens").intValue()).isEqualTo(50);
        assertThat(out.at("/sampling/sampled").textValue()).isEqualTo("sampled 1");
        assertThat(out.at("/sampling/model").textValue()).isEqualTo("test-model");
        // the same call again asks the agent again: an answer that was the agent's is never stored
        assertThat(out.at("/samplingAgain/sampled").textValue()).isEqualTo("sampled 2");
        assertThat(out.at("/asked/elicitation/0/message").textValue()).isEqualTo("Who are you?");
        assertThat(out.at("/asked/elicitation/0/requestedSchema/required/0").textValue()).isEqualTo("name");
        assertThat(out.at("/elicitation/content/name").textValue()).isEqualTo("Ada Lovelace");
        assertThat(out.at("/elicitation/action").textValue()).isEqualTo("accept");
        // asked once by the lab's call (on stdio, execache's session asks the agent's roots again when they change)
        assertThat(out.at("/rootsAsked").intValue()).isEqualTo(1);
        assertThat(out.at("/roots/roots/0/uri").textValue()).isEqualTo("file:///work/project");
        if (mode.equals("legacy") && transport.equals("stdio") && server.equals("lab")) {
            // the agent's notifications/roots/list_changed reached the url server's session
            assertThat(out.at("/rootsChangedBy").intValue()).isEqualTo(1);
        }
        if (mode.equals("legacy") && server.equals("modern")) {
            // a prompt and a resource the 2026-07-28 lab answers input_required: the agent of the initialize era is
            // asked as its own request each time (nothing that needed its answer is kept), and gets the answer
            assertThat(out.at("/prompt").textValue()).isEqualTo("Hello, Ada Lovelace");
            assertThat(out.at("/promptAgain").textValue()).isEqualTo("Hello, Ada Lovelace");
            assertThat(out.at("/read").textValue()).isEqualTo("Hello, Ada Lovelace");
            assertThat(out.at("/readsAsked").intValue()).isEqualTo(3);
        }
        // a tool the lab does not list is called as directly, never kept; one execache left out stays out
        assertThat(out.at("/unlisted/args/say").textValue()).isEqualTo("hi");
        assertThat(out.at("/cache/unlisted").textValue()).isEqualTo("bypass");
        assertThat(out.at("/badHeader").textValue()).startsWith("rejected: ").contains("Unknown tool");
        for (String call : List.of("sampling", "samplingAgain", "elicitation", "roots")) {
            // the lab marks them read-only, so they are looked up: each a miss that was not stored
            assertThat(out.at("/cache/" + call).textValue()).as(call).isEqualTo("miss");
        }
        // a finished sleep is kept; the cancelled one ended at the lab (2025: notifications/cancelled, 2026: its
        // request closed) and is not
        assertThat(out.at("/finished/cached").booleanValue()).isTrue();
        assertThat(out.at("/sleeps/0/state").textValue()).isIn("cancelled", "closed");
        if (out.at("/sleeps/0/state").textValue().equals("cancelled")) {
            // by the agent's cancel, not by execache giving up on the call at its --timeout
            assertThat(out.at("/sleeps/0/reason").textValue()).isEqualTo("the call was cancelled");
        }
        assertThat(out.at("/cancelled/cached").booleanValue()).isFalse();
    }

    private static JsonNode client(String mode, String server, String transport) throws Exception {
        List<String> arguments = new ArrayList<>(List.of(mode, server, Integer.toString(SLEEPS.incrementAndGet()),
                transport));
        if (transport.equals("http")) {
            arguments.add(http.url());
        } else {
            arguments.add(ServeProcess.java());
            arguments.addAll(ServeProcess.command("asks-" + mode + "-" + server, List.of("--store", "memory", "--config",
                    config.toString())));
        }
        return TypeScriptClient.runScript("asks-client.mjs", arguments, NO_POOL);
    }
}
