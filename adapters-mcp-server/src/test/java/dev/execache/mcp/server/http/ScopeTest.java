package dev.execache.mcp.server.http;

import dev.execache.gateway.Json;
import dev.execache.mcp.server.http.Scope;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which scope each request needs at {@code serve --http} with OAuth. */
class ScopeTest {
    private static ObjectNode call(String tool) {
        ObjectNode params = Json.MAPPER.createObjectNode();
        params.put("name", tool);
        return params;
    }

    @Test
    void readingFiguresAndListsNeedsRead() {
        assertThat(Scope.neededFor("tools/call", call("cache_stats"))).isEqualTo(Scope.READ);
        assertThat(Scope.neededFor("tools/call", call("describe_tools"))).isEqualTo(Scope.READ);
        assertThat(Scope.neededFor("tools/call", call("inspect_tool_call"))).isEqualTo(Scope.READ);
        assertThat(Scope.neededFor("tools/list", null)).isEqualTo(Scope.READ);
        assertThat(Scope.neededFor("resources/list", null)).isEqualTo(Scope.READ);
        assertThat(Scope.neededFor("prompts/list", null)).isEqualTo(Scope.READ);
    }

    @Test
    void runningCodeAndReachingADownstreamServerNeedsRun() {
        assertThat(Scope.neededFor("tools/call", call("execute_code"))).isEqualTo(Scope.RUN);
        assertThat(Scope.neededFor("tools/call", call("github__list_commits"))).isEqualTo(Scope.RUN);
        assertThat(Scope.neededFor("tools/call", Json.MAPPER.createObjectNode())).isEqualTo(Scope.RUN);
        assertThat(Scope.neededFor("resources/read", null)).isEqualTo(Scope.RUN);
        assertThat(Scope.neededFor("prompts/get", null)).isEqualTo(Scope.RUN);
        assertThat(Scope.neededFor("completion/complete", null)).isEqualTo(Scope.RUN);
        for (String task : List.of("tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update")) {
            assertThat(Scope.neededFor(task, null)).as(task).isEqualTo(Scope.RUN);
        }
    }

    @Test
    void changingTheSharedCacheNeedsAdmin() {
        assertThat(Scope.neededFor("tools/call", call("clear_cache"))).isEqualTo(Scope.ADMIN);
        assertThat(Scope.neededFor("tools/call", call("invalidate_tool"))).isEqualTo(Scope.ADMIN);
    }

    @Test
    void theHandshakeNeedsOnlyAValidToken() {
        assertThat(Scope.neededFor("initialize", null)).isNull();
        assertThat(Scope.neededFor("server/discover", null)).isNull();
        assertThat(Scope.neededFor("ping", null)).isNull();
        assertThat(Scope.neededFor("logging/setLevel", null)).isNull();
    }
}
