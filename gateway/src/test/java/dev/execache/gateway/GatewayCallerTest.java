package dev.execache.gateway;

import dev.execache.gateway.Gateway;
import dev.execache.gateway.GatewayPolicy;
import dev.execache.gateway.Json;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.CachePolicy;
import dev.execache.core.CacheStatus;
import dev.execache.core.Freshness;
import dev.execache.core.MutableClock;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.SimpleStore;
import dev.execache.core.StoreGuard;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.ToolCatalog;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A tool call made by code for a run's caller: the server's progress goes to the caller under the tool's name, and
 * the server's request to the agent to the caller's agent; an answer that depended on the agent's is never kept.
 */
class GatewayCallerTest {
    private final MutableClock clock = new MutableClock();
    /** The agents the server found during its calls (null: none could be asked). */
    private final List<ToolCatalog.Agent> agentsFound = new CopyOnWriteArrayList<>();

    /**
     * One read-only tool, lab's ask: two steps of progress, then, with {@code sample}, a question for the agent; with
     * {@code hint}, that {@code cache_hint} on its result.
     */
    private final ToolCatalog catalog = new ToolCatalog() {
        @Override
        public List<CatalogTool> tools() {
            return List.of(new CatalogTool("lab__ask", "lab", "v1", Map.of("name", "ask", "inputSchema",
                    Map.of("type", "object")), true, true));
        }

        @Override
        public ToolResult call(String tool, Map<String, Object> args) {
            return call(tool, args, null, null);
        }

        @Override
        public ToolResult call(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress,
                Agent agent) {
            agentsFound.add(agent == null ? NOBODY : agent);
            if (progress != null) {
                progress.accept(Map.of("progress", 1, "total", 2, "message", "half"));
                progress.accept(Map.of("progress", 2, "total", 2));
            }
            String text = Boolean.TRUE.equals(args.get("sample")) && agent != null
                    ? agent.ask("sampling/createMessage", "{\"maxTokens\":5}") : "done";
            ObjectNode result = Json.MAPPER.createObjectNode();
            result.set("content", Json.MAPPER.createArrayNode()
                    .add(Json.MAPPER.createObjectNode().put("type", "text").put("text", text)));
            if (args.get("hint") != null) {
                result.putObject("_meta").put("cache_hint", (String) args.get("hint"));
            }
            return ToolResult.ok(Json.write(result));
        }

        @Override
        public void addListener(Listener listener) {
        }

        @Override
        public void close() {
        }
    };
    private static final ToolCatalog.Agent NOBODY = (method, params) -> {
        throw new AssertionError("not an agent");
    };

    private final Gateway gateway = Gateway.builder(catalog, StoreGuard.of(new SimpleStore(clock)),
            new MutableToolVersions(), new GatewayPolicy(List.of(new GatewayPolicy.Server("lab", true, true, true, true,
            null)), List.of()), CachePolicy.DEFAULTS).clock(clock).build();

    /** A run's caller that records what it hears, with an agent that answers every request "sampled". */
    private static final class Heard implements CodeTools.Caller {
        final List<String> progress = new CopyOnWriteArrayList<>();
        final List<String> asked = new CopyOnWriteArrayList<>();

        @Override
        public void progress(String tool, Map<String, Object> step) {
            progress.add(tool + " " + step.get("progress") + "/" + step.get("total") + " " + step.get("message"));
        }

        @Override
        public ToolCatalog.Agent agent() {
            return (method, params) -> {
                asked.add(method + " " + params);
                return "sampled";
            };
        }
    }

    @Test
    void theServersProgressGoesToTheRunsCallerNamedByToolAndAHitReportsNone() {
        Heard heard = new Heard();

        CodeToolCall first = gateway.call("lab", "ask", "{}", null, Freshness.ANY, heard);
        CodeToolCall again = gateway.call("lab", "ask", "{}", null, Freshness.ANY, heard);

        assertThat(first.status()).isEqualTo(CacheStatus.MISS);
        assertThat(first.cacheable()).isTrue();
        assertThat(again.status()).isEqualTo(CacheStatus.HIT);
        assertThat(heard.progress).containsExactly("lab__ask 1/2 half", "lab__ask 2/2 null");
        assertThat(heard.asked).isEmpty();
    }

    @Test
    void aServerAsksTheRunsAgentAndThatAnswerIsNeverKeptNorTheRunThatReadIt() {
        Heard heard = new Heard();

        CodeToolCall first = gateway.call("lab", "ask", "{\"sample\":true}", null, Freshness.ANY, heard);
        CodeToolCall again = gateway.call("lab", "ask", "{\"sample\":true}", null, Freshness.ANY, heard);

        assertThat(first.answer().json()).isEqualTo("\"sampled\"");
        assertThat(heard.asked).containsExactly("sampling/createMessage {\"maxTokens\":5}",
                "sampling/createMessage {\"maxTokens\":5}");
        assertThat(first.cacheable()).isFalse();
        assertThat(first.outcome().notCachedBecause()).contains("the server asked the agent during the call");
        assertThat(again.status()).isEqualTo(CacheStatus.MISS);
        // the agent is the run's only during its calls: this thread carries none after
        assertThat(Gateway.callingAgent()).isNull();
    }

    @Test
    void anAnswerTheServerSaidNotToCacheIsNotStoredSoARunThatReadItIsKeptOnlyForRevalidation() {
        CodeToolCall first = gateway.call("lab", "ask", "{\"hint\":\"no-cache\"}", null, Freshness.ANY, new Heard());
        CodeToolCall again = gateway.call("lab", "ask", "{\"hint\":\"no-cache\"}", null, Freshness.ANY, new Heard());

        // a read a revalidation may ask again, whose answer is not in the cache: the run is no fresher than it
        assertThat(first.cacheable()).isTrue();
        assertThat(first.stored()).isFalse();
        assertThat(first.outcome().expiresAt()).isNull();
        assertThat(again.status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void withoutACallerTheServerFindsNoAgentToAsk() {
        CodeToolCall call = gateway.call("lab", "ask", "{\"sample\":true}", null, Freshness.ANY, CodeTools.Caller.NONE);

        assertThat(call.answer().json()).isEqualTo("\"done\"");
        assertThat(agentsFound).containsExactly(NOBODY);
    }
}
