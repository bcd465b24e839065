package dev.execache.gateway;

import dev.execache.gateway.ServerReads;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.CacheStatus;
import dev.execache.core.CachedTool;
import dev.execache.core.Freshness;
import dev.execache.core.MutableClock;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.SimpleStore;
import dev.execache.core.ToolCallOutcome;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Resource reads and prompts through the tool cache, over a scripted server "lab" on a map store. */
class ServerReadsTest {
    private static final String URI = "lab://notes/readme";

    private final ScriptedCatalog catalog = new ScriptedCatalog();
    private final AtomicLong agentAsks = new AtomicLong();
    /** How often lab was asked each read, by params. */
    private final Map<String, Integer> asked = new ConcurrentHashMap<>();
    private ServerReads reads;

    @BeforeEach
    void setUp() {
        MutableClock clock = new MutableClock();
        MutableToolVersions versions = new MutableToolVersions(Map.of());
        reads = new ServerReads(catalog, versions, agentAsks::get, (server, name) -> false, () -> null);
        reads.cacheIn(CachedTool.builder(reads::ask, new SimpleStore(clock)).toolVersions(versions).clock(clock).build());
        catalog.addNotificationListener(reads::changed);
        catalog.answers = (server, method, params) -> {
            int count = asked.merge(method + " " + params, 1, Integer::sum);
            return "{\"contents\":[{\"uri\":\"" + URI + "\",\"text\":\"read " + count + "\"}]}";
        };
    }

    private ToolCallOutcome read(String uri) {
        return reads.read("lab", McpSchema.METHOD_RESOURCES_READ, Map.of("uri", uri), null, Freshness.ANY);
    }

    @Test
    void aSecondReadIsAHitWithTheServersAnswer() {
        ToolCallOutcome miss = read(URI);
        ToolCallOutcome hit = read(URI);

        assertThat(miss.status()).isEqualTo(CacheStatus.MISS);
        assertThat(hit.status()).isEqualTo(CacheStatus.HIT);
        assertThat(hit.result().json()).isEqualTo(miss.result().json()).contains("read 1");
        assertThat(catalog.asked).containsExactly("lab resources/read {\"uri\":\"" + URI + "\"}");
        assertThat(reads.isRead(ServerReads.readName("lab", McpSchema.METHOD_RESOURCES_READ))).isTrue();
        assertThat(reads.isRead("lab__read_note")).isFalse();
    }

    @Test
    void resourcesUpdatedRemovesThatUrisReadOnly() {
        read(URI);
        read("lab://notes/other");

        catalog.notify("lab", McpSchema.METHOD_NOTIFICATION_RESOURCES_UPDATED, Map.of("uri", URI));

        assertThat(read(URI).status()).isEqualTo(CacheStatus.MISS);
        assertThat(read("lab://notes/other").status()).isEqualTo(CacheStatus.HIT);
    }

    @Test
    void aReadInFlightWhenItsServerSaysTheResourceChangedIsNotKept() {
        catalog.answers = (server, method, params) -> {
            int count = asked.merge(method + " " + params, 1, Integer::sum);
            if (count == 1) {
                // the server read the old contents, then the resource changed, and the notice came before its answer
                catalog.notify("lab", McpSchema.METHOD_NOTIFICATION_RESOURCES_UPDATED, Map.of("uri", URI));
            }
            return "{\"contents\":[{\"uri\":\"" + URI + "\",\"text\":\"read " + count + "\"}]}";
        };

        ToolCallOutcome stale = read(URI);
        ToolCallOutcome fresh = read(URI);

        assertThat(stale.result().json()).contains("read 1");
        assertThat(stale.expiresAt()).isNull();
        assertThat(fresh.status()).isEqualTo(CacheStatus.MISS);
        assertThat(fresh.result().json()).contains("read 2");
        assertThat(read(URI).status()).isEqualTo(CacheStatus.HIT);
    }

    @Test
    void aListChangeInFlightKeepsThePromptFromBeingKept() {
        catalog.answers = (server, method, params) -> {
            int count = asked.merge(method + " " + params, 1, Integer::sum);
            if (count == 1) {
                catalog.notify("lab", McpSchema.METHOD_NOTIFICATION_PROMPTS_LIST_CHANGED, Map.of());
            }
            return "{\"messages\":[],\"description\":\"get " + count + "\"}";
        };
        Map<String, Object> greet = Map.of("name", "greet");

        reads.read("lab", McpSchema.METHOD_PROMPT_GET, greet, null, Freshness.ANY);

        assertThat(reads.read("lab", McpSchema.METHOD_PROMPT_GET, greet, null, Freshness.ANY).status())
                .isEqualTo(CacheStatus.MISS);
    }

    @Test
    void aReadDuringWhichTheServerAskedTheAgentIsNotKept() {
        catalog.answers = (server, method, params) -> {
            agentAsks.incrementAndGet();
            return "{\"contents\":[]}";
        };

        read(URI);

        assertThat(read(URI).status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void aReadTheServerSaysIsStaleAtOnceIsNotKept() {
        catalog.answers = (server, method, params) -> "{\"contents\":[],\"ttlMs\":0}";

        read(URI);

        assertThat(read(URI).status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void anInputRequiredAnswerIsPassedOnAndNeverKept() {
        String inputRequired = "{\"resultType\":\"input_required\",\"inputRequests\":{\"user_context\":"
                + "{\"method\":\"elicitation/create\",\"params\":{\"message\":\"Which context?\"}}},"
                + "\"requestState\":\"server-state-1\"}";
        catalog.answers = (server, method, params) -> inputRequired;
        Map<String, Object> prompt = Map.of("name", "test_input_required_result_prompt");

        ToolCallOutcome first = reads.read("lab", McpSchema.METHOD_PROMPT_GET, prompt, null, Freshness.ANY);
        ToolCallOutcome second = reads.read("lab", McpSchema.METHOD_PROMPT_GET, prompt, null, Freshness.ANY);
        read(URI);
        ToolCallOutcome readAgain = read(URI);

        assertThat(first.result().json()).isEqualTo(inputRequired);
        assertThat(first.expiresAt()).isNull();
        assertThat(second.status()).isEqualTo(CacheStatus.MISS);
        assertThat(second.result().json()).isEqualTo(inputRequired);
        assertThat(readAgain.status()).isEqualTo(CacheStatus.MISS);
        assertThat(catalog.asked).hasSize(4);
    }
}
