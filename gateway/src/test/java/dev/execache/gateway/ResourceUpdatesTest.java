package dev.execache.gateway;

import dev.execache.gateway.Gateway;
import dev.execache.gateway.GatewayPolicy;
import dev.execache.gateway.Json;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.CachePolicy;
import dev.execache.core.MutableClock;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.SimpleStore;
import dev.execache.core.StoreGuard;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two scripted servers behind the gateway list the same URI: lab (first in {@code servers:}, so its resource is the
 * one offered) and twin. What the agent hears of their {@code notifications/resources/updated}, and what that does to
 * the cached read.
 */
class ResourceUpdatesTest {
    private static final String URI = "lab://notes/readme";
    private static final String ROOM = "lab://rooms/kitchen";

    private final ScriptedCatalog catalog = new ScriptedCatalog();
    /** What the agent heard, as "METHOD URI". */
    private final List<String> heard = new CopyOnWriteArrayList<>();
    /** How often each server was read, by server. */
    private final Map<String, Integer> reads = new ConcurrentHashMap<>();
    private final ManualTimer timer = new ManualTimer();
    private Gateway gateway;

    @BeforeEach
    void setUp() {
        Map<String, Set<String>> features = new LinkedHashMap<>();
        features.put("lab", Set.of("resources"));
        features.put("twin", Set.of("resources"));
        catalog.features = features;
        catalog.answers = (server, method, params) -> switch (method) {
            case McpSchema.METHOD_RESOURCES_LIST -> "{\"resources\":[{\"uri\":\"" + URI + "\",\"name\":\"readme\"}]}";
            case McpSchema.METHOD_RESOURCES_TEMPLATES_LIST ->
                    "{\"resourceTemplates\":[{\"uriTemplate\":\"lab://rooms/{room}\",\"name\":\"room\"}]}";
            case McpSchema.METHOD_RESOURCES_READ -> "{\"contents\":[{\"uri\":\"" + URI + "\",\"text\":\"" + server
                    + " read " + reads.merge(server, 1, Integer::sum) + "\"}]}";
            default -> "{}";
        };
        MutableClock clock = new MutableClock();
        GatewayPolicy policy = new GatewayPolicy(List.of(new GatewayPolicy.Server("lab", true, true),
                new GatewayPolicy.Server("twin", true, true)), List.of());
        gateway = Gateway.builder(catalog, StoreGuard.of(new SimpleStore(clock)), new MutableToolVersions(), policy,
                CachePolicy.DEFAULTS).clock(clock).listChanges(timer::notices).build();
        gateway.onNotification((method, params) -> heard.add(method + " " + params.path("uri").asText()));
    }

    /** The read's text and how the cache answered it. */
    private String read(String uri) {
        ObjectNode result = gateway.features().answer(McpSchema.METHOD_RESOURCES_READ,
                Json.MAPPER.createObjectNode().put("uri", uri), null);
        return result.at("/contents/0/text").asText() + ", " + result.at("/_meta/dev.execache~1cache/status").asText();
    }

    private void updated(String server, String uri) {
        catalog.notify(server, McpSchema.METHOD_NOTIFICATION_RESOURCES_UPDATED, Map.of("uri", uri));
    }

    @Test
    void anUpdateFromTheServerWhoseResourceIsOfferedReachesTheAgentAndRemovesTheRead() {
        assertThat(read(URI)).isEqualTo("lab read 1, miss");

        updated("lab", URI);

        assertThat(heard).containsExactly("notifications/resources/updated " + URI);
        assertThat(read(URI)).isEqualTo("lab read 2, miss");
    }

    @Test
    void anUpdateFromASecondServerThatListsTheSameUriIsNotPassedOnAndKeepsTheRead() {
        assertThat(read(URI)).isEqualTo("lab read 1, miss");

        updated("twin", URI);

        assertThat(heard).isEmpty();
        assertThat(read(URI)).isEqualTo("lab read 1, hit");
        assertThat(reads).doesNotContainKey("twin");
    }

    @Test
    void aUriATemplateMatchesIsItsServersAndAUriNoListNamesIsTheSenders() {
        assertThat(read(ROOM)).startsWith("lab read 1");

        updated("twin", ROOM);
        updated("lab", ROOM);
        updated("twin", "twin://unlisted");

        assertThat(heard).containsExactly("notifications/resources/updated " + ROOM,
                "notifications/resources/updated twin://unlisted");
    }

    @Test
    void listChangesOfEveryServerReachTheAgent() {
        catalog.notify("twin", McpSchema.METHOD_NOTIFICATION_RESOURCES_LIST_CHANGED, Map.of());
        timer.advance(ListChangeNotices.QUIET);

        assertThat(heard).containsExactly("notifications/resources/list_changed ");
    }

    @Test
    void aBurstOfListChangesIsOneOfEachKindWhenItIsOver() {
        assertThat(read(URI)).isEqualTo("lab read 1, miss");
        for (int change = 0; change < 20; change++) {
            catalog.notify(change % 2 == 0 ? "lab" : "twin", McpSchema.METHOD_NOTIFICATION_RESOURCES_LIST_CHANGED,
                    Map.of());
            catalog.notify("lab", McpSchema.METHOD_NOTIFICATION_PROMPTS_LIST_CHANGED, Map.of());
            timer.advance(Duration.ofMillis(10));
        }
        assertThat(heard).isEmpty();
        assertThat(read(URI)).as("the reads are dropped at once, not when the agent hears of it")
                .isEqualTo("lab read 2, miss");

        timer.advance(ListChangeNotices.QUIET);

        assertThat(heard).containsExactlyInAnyOrder("notifications/resources/list_changed ",
                "notifications/prompts/list_changed ");

        catalog.notify("lab", McpSchema.METHOD_NOTIFICATION_RESOURCES_LIST_CHANGED, Map.of());
        timer.advance(ListChangeNotices.QUIET);

        assertThat(heard).as("a later change is a burst of its own").hasSize(3);
    }
}
