package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.CachePolicy;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.StoreGuard;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.spi.ServerRefusedException;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.tools.mcp.McpServerSettings;
import dev.execache.tools.mcp.McpToolCatalog;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Tasks of the reference server ({@code @modelcontextprotocol/server-everything}, pinned, whose
 * {@code simulate-research-query} must be called as a task) through the gateway: one server, two gateways in front of
 * it, one with a rule that caches the tool's answers and one without.
 */
class ServerTasksTest {
    private static final String TOOL = "everything__simulate-research-query";
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

    private static McpToolCatalog catalog;
    private static Gateway cached;
    private static Gateway uncached;

    @BeforeAll
    static void start() {
        McpServerSettings everything = new McpServerSettings("everything", "node", List.of(Downstream.nodeModules()
                .resolve("@modelcontextprotocol/server-everything/dist/index.js").toString(), "stdio"), Map.of(), null,
                false);
        catalog = new McpToolCatalog(List.of(everything), CALL_TIMEOUT, Duration.ofHours(1), line -> { },
                Clock.systemUTC()).start();
        Downstream.await("the reference server connected", Duration.ofSeconds(60),
                () -> catalog.tools().stream().anyMatch(tool -> tool.name().equals(TOOL)));
        GatewayPolicy.Server server = new GatewayPolicy.Server("everything", false, true);
        cached = Gateway.builder(catalog, StoreGuard.of(new MemoryCacheStore(100, Clock.systemUTC())),
                new MutableToolVersions(), new GatewayPolicy(List.of(server),
                        List.of(ToolCacheRule.cache(TOOL, Duration.ofMinutes(5), 10))), CachePolicy.DEFAULTS).build();
        uncached = Gateway.builder(catalog, StoreGuard.of(new MemoryCacheStore(100, Clock.systemUTC())),
                new MutableToolVersions(), new GatewayPolicy(List.of(server), List.of()), CachePolicy.DEFAULTS).build();
    }

    @AfterAll
    static void stop() {
        if (catalog != null) {
            catalog.close();
        }
    }

    private static ObjectNode topic(String topic) {
        ObjectNode arguments = Json.MAPPER.createObjectNode();
        arguments.put("topic", topic);
        return arguments;
    }

    private static ObjectNode ttl() {
        ObjectNode task = Json.MAPPER.createObjectNode();
        task.put("ttl", 60_000);
        return task;
    }

    @Test
    void aTaskIsTheServersUnderAnIdOfExecachesAndOnlyItsCallerSeesIt() {
        ServerTasks tasks = uncached.tasks();
        assertThat(tasks.offered()).isTrue();
        assertThat(tasks.offers(TOOL)).isTrue();
        assertThat(tasks.required(TOOL)).isTrue();
        assertThat(tasks.offers("everything__echo")).as("a tool of the server, which offers tasks").isTrue();
        assertThat(tasks.required("everything__echo")).isFalse();

        JsonNode created = tasks.call(TOOL, topic("owls"), ttl(), "alice", null, false).get("task");
        String id = created.get("taskId").textValue();
        assertThat(created.get("status").textValue()).isEqualTo("working");
        assertThat(id).matches("[0-9a-f]{32}");
        // the server keeps its tasks five minutes, whatever is asked: its ttl as it gave it
        assertThat(created.get("ttl").asLong()).isEqualTo(300_000);

        // another caller is not told the task exists
        assertThatThrownBy(() -> tasks.get(id, "bob", false)).isInstanceOf(ServerRefusedException.class)
                .hasMessageContaining("Task not found");
        assertThatThrownBy(() -> tasks.result(id, "bob")).hasMessageContaining("Task not found");
        assertThatThrownBy(() -> tasks.cancel(id, "bob", false)).hasMessageContaining("Task not found");
        assertThat(tasks.list("bob").get("tasks")).isEmpty();
        assertThat(tasks.list("alice").get("tasks")).extracting(task -> task.get("taskId").textValue()).contains(id);
        assertThat(tasks.get(id, "alice", false).get("taskId").textValue()).isEqualTo(id);

        // tasks/result waits for the end, as the server does
        ObjectNode result = tasks.result(id, "alice");
        assertThat(result.at("/content/0/text").textValue()).contains("# Research Report: owls");
        assertThat(result.at("/_meta/io.modelcontextprotocol~1related-task/taskId").textValue()).isEqualTo(id);
        assertThat(tasks.get(id, "alice", false).get("status").textValue()).isEqualTo("completed");

        // a tool no rule caches (it says it is not read-only): its task's answer was not stored
        JsonNode again = tasks.call(TOOL, topic("owls"), ttl(), "alice", null, false).get("task");
        assertThat(again.get("status").textValue()).isEqualTo("working");
        assertThat(uncached.stats().getOrDefault(TOOL, null)).isNull();
        tasks.cancel(again.get("taskId").textValue(), "alice", false);
    }

    @Test
    void aCachedToolsTaskIsStoredWhenItCompletesAndTheSameCallIsThenATaskCompletedAtOnce() {
        ServerTasks tasks = cached.tasks();
        String first = tasks.call(TOOL, topic("bees"), ttl(), null, null, false).at("/task/taskId").textValue();
        assertThat(tasks.get(first, null, false).get("status").textValue()).isIn("working", "completed");
        ObjectNode answer = tasks.result(first, null);
        assertThat(answer.at("/content/0/text").textValue()).contains("# Research Report: bees");

        JsonNode hit = tasks.call(TOOL, topic("bees"), ttl(), null, null, false).get("task");
        assertThat(hit.get("status").textValue()).isEqualTo("completed");
        String id = hit.get("taskId").textValue();
        assertThat(id).isNotEqualTo(first);
        ObjectNode again = tasks.result(id, null);
        assertThat(again.get("content")).isEqualTo(answer.get("content"));
        assertThat(again.at("/_meta/io.modelcontextprotocol~1related-task/taskId").textValue()).isEqualTo(id);
        assertThat(again.at("/_meta/dev.execache~1cache/status").textValue()).isEqualTo("hit");
        assertThat(answer.at("/_meta/dev.execache~1cache").isMissingNode()).isTrue();
        assertThat(cached.stats().get(TOOL).hits()).isEqualTo(1);

        // the 2026-07-28 era gets the cached answer as the plain result, which the extension allows
        ObjectNode plain = tasks.call(TOOL, topic("bees"), null, null, null, true);
        assertThat(plain.has("taskId")).isFalse();
        assertThat(plain.get("content")).isEqualTo(answer.get("content"));

        // other arguments are another call: a task of the server's
        JsonNode other = tasks.call(TOOL, topic("wasps"), ttl(), null, null, false).get("task");
        assertThat(other.get("status").textValue()).isEqualTo("working");
        String wasps = other.get("taskId").textValue();
        tasks.cancel(wasps, null, false);
        // a cancelled task's answer, whatever the server gives, is not the tool's: nothing is stored
        try {
            tasks.result(wasps, null);
        } catch (ServerRefusedException e) {
            // the server may refuse the result of a cancelled task
        }
        JsonNode afterCancel = tasks.call(TOOL, topic("wasps"), ttl(), null, null, false).get("task");
        assertThat(afterCancel.get("status").textValue()).isEqualTo("working");
        tasks.cancel(afterCancel.get("taskId").textValue(), null, false);
    }

    @Test
    void aTaskOfTheServersEraReachesA2026AgentAsTheExtensionWritesIt() {
        ServerTasks tasks = uncached.tasks();
        ObjectNode created = tasks.call(TOOL, topic("moths"), null, "carol", null, true);
        assertThat(created.get("resultType").textValue()).isEqualTo("task");
        assertThat(created.has("task")).as("flat, no task wrapper").isFalse();
        assertThat(created.get("ttlMs").isNumber()).isTrue();
        assertThat(created.has("ttl")).isFalse();
        String id = created.get("taskId").textValue();

        Downstream.await("the task completed", Duration.ofSeconds(30),
                () -> tasks.get(id, "carol", true).get("status").textValue().equals("completed"));
        ObjectNode done = tasks.get(id, "carol", true);
        assertThat(done.at("/result/content/0/text").textValue()).contains("# Research Report: moths");
        assertThat(done.at("/result/_meta/io.modelcontextprotocol~1related-task").isMissingNode()).isTrue();
        assertThat(done.has("pollIntervalMs")).isTrue();
        // a cancel of a task that ended is acknowledged as any other in this era
        assertThat(tasks.cancel(id, "carol", true)).isEmpty();
        assertThat(tasks.get(id, "carol", true).get("status").textValue()).isEqualTo("completed");

        // cancel is an empty acknowledgement in this era; the task ends cancelled
        String cancelled = tasks.call(TOOL, topic("gnats"), null, "carol", null, true).get("taskId").textValue();
        assertThat(tasks.cancel(cancelled, "carol", true)).isEmpty();
        assertThat(tasks.get(cancelled, "carol", true).get("status").textValue()).isEqualTo("cancelled");
        assertThatThrownBy(() -> tasks.update(cancelled, "carol")).isInstanceOf(ServerRefusedException.class)
                .hasMessageContaining("takes no input");
    }

    @Test
    void aCancelledTaskIsCancelledOnItsServer() {
        ServerTasks tasks = uncached.tasks();
        String id = tasks.call(TOOL, topic("ants"), ttl(), "dave", null, false).at("/task/taskId").textValue();
        assertThat(tasks.cancel(id, "dave", false).get("status").textValue()).isEqualTo("cancelled");
        assertThat(tasks.get(id, "dave", false).get("status").textValue()).isEqualTo("cancelled");
    }
}
