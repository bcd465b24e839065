package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

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
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A server reached as each caller's person: the gateway hands the call's person to the catalog, keeps each person's
 * answer for them alone, keeps no run that read one, and asks the server uncached for a call made for nobody.
 */
class PersonsAnswersTest {
    private static final ToolCatalog.Person ALICE = new ToolCatalog.Person("alice", "alice-token");
    private static final ToolCatalog.Person BOB = new ToolCatalog.Person("bob", "bob-token");

    private final MutableClock clock = new MutableClock();
    /** The person of each call the server got ("nobody" for none). */
    private final List<String> reachedAs = new CopyOnWriteArrayList<>();

    /** One read-only tool, whoami, of server {@code lab}, reached as each caller's person: it answers their subject. */
    private final ToolCatalog catalog = new ToolCatalog() {
        @Override
        public List<CatalogTool> tools() {
            return List.of(new CatalogTool("lab__whoami", "lab", "v1", Map.of("name", "whoami", "inputSchema",
                    Map.of("type", "object")), true, true));
        }

        @Override
        public ToolResult call(String tool, Map<String, Object> args) {
            return call(tool, args, null, null, null);
        }

        @Override
        public ToolResult call(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress, Agent agent,
                Person person) {
            String who = person == null ? "nobody" : person.subject();
            reachedAs.add(who);
            return ToolResult.ok("{\"content\":[{\"type\":\"text\",\"text\":\"" + who + "\"}]}");
        }

        @Override
        public Set<String> perPerson() {
            return Set.of("lab");
        }

        @Override
        public void addListener(Listener listener) {
        }

        @Override
        public void close() {
        }
    };

    private final Gateway gateway = Gateway.builder(catalog, StoreGuard.of(new SimpleStore(clock)),
            new MutableToolVersions(), new GatewayPolicy(List.of(new GatewayPolicy.Server("lab", true, true, true, true,
            null)), List.of()), CachePolicy.DEFAULTS).clock(clock).build();

    private CallToolResult call(ToolCatalog.Person person) {
        OfferedTool whoami = gateway.specifications().stream()
                .filter(spec -> spec.tool().name().equals("lab__whoami")).findFirst().orElseThrow();
        return whoami.call(new CallToolRequest("lab__whoami", Map.of()), new RequestOrigin("agent", 1, person));
    }

    private static String text(CallToolResult result) {
        return ((TextContent) result.content().get(0)).text();
    }

    private static String status(CallToolResult result) {
        return String.valueOf(((Map<?, ?>) result.meta().get("dev.execache/cache")).get("status"));
    }

    /** A run's caller made for {@code person}. */
    private static CodeTools.Caller runFor(ToolCatalog.Person person) {
        return new CodeTools.Caller() {
            @Override
            public ToolCatalog.Person person() {
                return person;
            }
        };
    }

    @Test
    void eachPersonGetsTheirOwnAnswerAndASecondCallIsAHitForThemAlone() {
        CallToolResult alice = call(ALICE);
        CallToolResult bob = call(BOB);
        CallToolResult aliceAgain = call(ALICE);
        CallToolResult bobAgain = call(BOB);

        assertThat(List.of(text(alice), text(bob), text(aliceAgain), text(bobAgain)))
                .containsExactly("alice", "bob", "alice", "bob");
        assertThat(List.of(status(alice), status(bob), status(aliceAgain), status(bobAgain)))
                .containsExactly("miss", "miss", "hit", "hit");
        assertThat(reachedAs).containsExactly("alice", "bob");
    }

    @Test
    void codesCallsReachTheServerAsTheRunsPersonAndNoRunKeepsWhatTheyRead() {
        CodeToolCall alice = gateway.call("lab", "whoami", "{}", null, Freshness.ANY, runFor(ALICE));
        CodeToolCall bob = gateway.call("lab", "whoami", "{}", null, Freshness.ANY, runFor(BOB));
        CodeToolCall aliceAgain = gateway.call("lab", "whoami", "{}", null, Freshness.ANY, runFor(ALICE));

        assertThat(alice.answer().json()).isEqualTo("\"alice\"");
        assertThat(bob.answer().json()).isEqualTo("\"bob\"");
        assertThat(aliceAgain.status()).isEqualTo(CacheStatus.HIT);
        assertThat(aliceAgain.answer().json()).isEqualTo("\"alice\"");
        assertThat(alice.cacheable()).as("a run's key names no person").isFalse();
        assertThat(reachedAs).containsExactly("alice", "bob");
    }

    @Test
    void aCallForNobodyIsAskedEveryTimeAndNeverServedAPersonsAnswer() {
        call(ALICE);

        CallToolResult nobody = call(null);
        CallToolResult nobodyAgain = call(null);

        assertThat(text(nobody)).isEqualTo("nobody");
        assertThat(status(nobodyAgain)).isEqualTo("bypass");
        assertThat(String.valueOf(((Map<?, ?>) nobody.meta().get("dev.execache/cache")).get("reason")))
                .contains("reached as each agent's person, and this call is made for nobody");
        assertThat(reachedAs).containsExactly("alice", "nobody", "nobody");
    }
}
