package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.StoreGuard;
import dev.execache.core.CachePolicy;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.tools.mcp.McpServerSettings;
import dev.execache.tools.mcp.McpToolCatalog;
import dev.execache.core.CapturedLog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The gateway in process, against real downstream MCP servers started by the test. */
class GatewayTest {
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private final List<McpToolCatalog> catalogs = new ArrayList<>();
    private final MutableToolVersions versions = new MutableToolVersions();
    private McpToolCatalog catalog;

    @AfterEach
    void stopServers() {
        catalogs.forEach(McpToolCatalog::close);
    }

    private Gateway gateway(List<ServerEntry> servers, List<ToolCacheRule> rules, CacheStore store) {
        catalog = new McpToolCatalog(ServerEntry.settings(servers), CALL_TIMEOUT,
                Duration.ofHours(1), line -> { }, Clock.systemUTC()).start();
        catalogs.add(catalog);
        return Gateway.builder(catalog, StoreGuard.of(store), versions, ServerEntry.policy(servers, rules),
                CachePolicy.DEFAULTS).build();
    }

    private Gateway lab(boolean invalidateOnWrite) {
        return gateway(List.of(new ServerEntry(Downstream.lab("lab", true), invalidateOnWrite)), List.of(),
                new MemoryCacheStore(100, Clock.systemUTC()));
    }

    /**
     * start() waits for a server at most the call timeout, and starting node on a loaded machine
     * may take longer (a start may take 30 s): a test that needs the server up waits for it.
     */
    private static void awaitConnected(McpToolCatalog catalog) throws InterruptedException {
        Downstream.await("the lab server connected", Duration.ofSeconds(60), () -> !catalog.tools().isEmpty());
    }

    /** The JSON a lab tool answered in its text content. */
    private static JsonNode answer(ToolResult result) {
        try {
            JsonNode text = Json.MAPPER.readTree(result.json()).at("/content/0/text");
            return Json.MAPPER.readTree(text.textValue());
        } catch (IOException e) {
            throw new AssertionError("not a tool result: " + result.json(), e);
        }
    }

    @Test
    void discoveredToolsAreOfferedAsServerTwoUnderscoresTool() {
        lab(true);

        assertThat(catalog.tools()).extracting(tool -> tool.name())
                .contains("lab__get_count", "lab__increment", "lab__set_description");
        assertThat(versions.versions().get("lab__get_count")).startsWith("mcp:");
    }

    @Test
    void readOnlyCallsAreCachedAndCounted() {
        Gateway gateway = lab(true);

        JsonNode first = answer(gateway.call("lab__get_count", Map.of("who", "a")));
        JsonNode second = answer(gateway.call("lab__get_count", Map.of("who", "a")));
        JsonNode other = answer(gateway.call("lab__get_count", Map.of("who", "b")));

        assertThat(first.get("served").intValue()).isEqualTo(1);
        assertThat(second).isEqualTo(first);
        assertThat(other.get("served").intValue()).isEqualTo(2);
        assertThat(gateway.stats().get("lab__get_count").hits()).isEqualTo(1);
        assertThat(gateway.stats().get("lab__get_count").misses()).isEqualTo(2);
    }

    @Test
    void aMutatingCallIsNeverCachedAndMakesTheNextReadOfItsServerFresh() {
        Gateway gateway = lab(true);
        assertThat(answer(gateway.call("lab__get_count", Map.of())).get("counter").intValue()).isZero();

        JsonNode once = answer(gateway.call("lab__increment", Map.of()));
        JsonNode twice = answer(gateway.call("lab__increment", Map.of()));
        JsonNode read = answer(gateway.call("lab__get_count", Map.of()));

        assertThat(once.get("counter").intValue()).isEqualTo(1);
        assertThat(twice.get("counter").intValue()).isEqualTo(2);
        assertThat(read.get("counter").intValue()).isEqualTo(2);
        assertThat(read.get("served").intValue()).isEqualTo(2);
    }

    @Test
    void withInvalidateOnWriteNoneAWriteLeavesTheCachedReads() {
        Gateway gateway = lab(false);
        gateway.call("lab__get_count", Map.of());

        gateway.call("lab__increment", Map.of());

        assertThat(answer(gateway.call("lab__get_count", Map.of())).get("counter").intValue()).isZero();
    }

    @Test
    void errorsAreNeverCached() {
        Gateway gateway = lab(true);

        ToolResult first = gateway.call("lab__fail", Map.of());
        ToolResult second = gateway.call("lab__fail", Map.of());

        assertThat(first.isError()).isTrue();
        assertThat(second.isError()).isTrue();
        assertThat(answer(second).get("served").intValue()).isEqualTo(2);
    }

    @Test
    void aSchemaChangeAnnouncedWithListChangedInvalidatesThatToolOnly() throws InterruptedException {
        Gateway gateway = lab(false);
        String before = versions.versions().get("lab__get_count");
        gateway.call("lab__get_count", Map.of());
        gateway.call("lab__get_other", Map.of());

        gateway.call("lab__set_description", Map.of("tool", "get_count", "description", "The counter, v2.",
                "notify", true));
        Downstream.await("the new digest of lab__get_count", CALL_TIMEOUT,
                () -> !before.equals(versions.versions().get("lab__get_count")));

        assertThat(answer(gateway.call("lab__get_count", Map.of())).get("served").intValue()).isEqualTo(2);
        assertThat(answer(gateway.call("lab__get_other", Map.of())).get("served").intValue()).isEqualTo(1);
    }

    @Test
    void aSchemaChangeWithoutListChangedIsFoundByTheNextDiscovery() {
        Gateway gateway = lab(false);
        String before = versions.versions().get("lab__get_count");
        String other = versions.versions().get("lab__get_other");
        gateway.call("lab__get_count", Map.of());
        gateway.call("lab__get_other", Map.of());
        gateway.call("lab__set_description", Map.of("tool", "get_count", "description", "Quietly changed.",
                "notify", false));

        catalog.refresh();

        assertThat(versions.versions().get("lab__get_count")).isNotEqualTo(before);
        assertThat(versions.versions().get("lab__get_other")).isEqualTo(other);
        assertThat(answer(gateway.call("lab__get_count", Map.of())).get("served").intValue()).isEqualTo(2);
        assertThat(answer(gateway.call("lab__get_other", Map.of())).get("served").intValue()).isEqualTo(1);
    }

    @Test
    void aServerKilledMidCallGivesAToolErrorAndIsRestartedWithBackoffLogged() throws InterruptedException {
        Gateway gateway = lab(true);
        long pid = catalog.pid("lab");

        ToolResult crashed;
        try (CapturedLog log = new CapturedLog()) {
            crashed = gateway.call("lab__crash", Map.of());
            Downstream.await("the restart logged", Duration.ofSeconds(60), () -> log.lines().stream()
                    .anyMatch(line -> line.matches("server lab exited \\(code -?\\d+\\); restarting in 1\\.0 s")));
        }

        assertThat(crashed.isError()).isTrue();
        assertThat(crashed.json()).contains("lab");
        Downstream.await("lab restarted", Duration.ofSeconds(60),
                () -> catalog.pid("lab") > 0 && catalog.pid("lab") != pid);
        assertThat(gateway.call("lab__pid", Map.of()).isError()).isFalse();
        assertThat(answer(gateway.call("lab__pid", Map.of())).get("pid").longValue()).isEqualTo(catalog.pid("lab"));
    }

    @Test
    void aCallWhileTheServerRestartsWaitsForItWithinTheCallTimeout() {
        Gateway gateway = lab(true);
        long pid = catalog.pid("lab");

        assertThat(gateway.call("lab__crash", Map.of()).isError()).isTrue();
        ToolResult next = gateway.call("lab__pid", Map.of());

        assertThat(next.isError()).as(next.json()).isFalse();
        assertThat(answer(next).get("pid").longValue()).isNotEqualTo(pid);
    }

    @Test
    void aSlowServerIsAToolErrorAfterTheCallTimeoutAndAnswersTheNextCall() throws InterruptedException {
        catalog = new McpToolCatalog(List.of(Downstream.lab("lab", true)), Duration.ofSeconds(2), Duration.ofHours(1),
                line -> { }, Clock.systemUTC()).start();
        catalogs.add(catalog);
        awaitConnected(catalog);

        ToolResult slow = catalog.call("lab__sleep", Map.of("ms", 600_000));

        assertThat(slow.isError()).isTrue();
        assertThat(slow.json()).contains("lab").contains("no answer in time");
        assertThat(answer(catalog.call("lab__get_other", Map.of())).get("served").intValue()).isEqualTo(1);
    }

    @Test
    void aServerThatCannotStartIsOneLineNamingItsCommandAndTheSystemsErrorAndACallSaysSoAtOnce() throws InterruptedException {
        Path command = dir.resolve("no-such-server");
        McpServerSettings missing = new McpServerSettings("gone", command.toString(), List.of(), Map.of(), null, true);
        ToolResult result;
        List<String> logged;
        try (CapturedLog log = new CapturedLog()) {
            catalog = new McpToolCatalog(List.of(missing), CALL_TIMEOUT, Duration.ofHours(1), line -> { },
                    Clock.systemUTC()).start();
            catalogs.add(catalog);
            result = catalog.call("gone__anything", Map.of());
            logged = log.lines();
        }

        assertThat(logged).filteredOn(line -> line.contains("gone")).singleElement().isEqualTo("server gone: cannot start "
                + command + ": No such file or directory; trying again in 1 s, then with backoff while it fails");
        assertThat(catalog.servers()).containsExactly(new ToolCatalog.ServerStatus("gone",
                ToolCatalog.ServerStatus.State.UNAVAILABLE, "cannot start " + command + ": No such file or directory", 0));
        assertThat(result.isError()).isTrue();
        assertThat(result.json()).contains("server gone is unavailable: cannot start " + command
                + ": No such file or directory (it is tried again in the background)");
    }

    @Test
    void aServerThatCouldNotStartIsTriedAgainWithBackoffAndItsToolsJoinWhenItComesUp() throws Exception {
        Path command = dir.resolve("late-server");
        McpServerSettings late = new McpServerSettings("late", command.toString(), List.of(), Map.of(), null, true);
        List<List<CatalogTool>> told = new CopyOnWriteArrayList<>();
        catalog = new McpToolCatalog(List.of(late), CALL_TIMEOUT, Duration.ofHours(1), line -> { }, Clock.systemUTC())
                .startInBackground();
        catalogs.add(catalog);
        catalog.addListener(told::add);
        Downstream.await("the first start failed", Duration.ofSeconds(60),
                () -> catalog.servers().get(0).state() == ToolCatalog.ServerStatus.State.UNAVAILABLE);

        Files.writeString(command, "#!/bin/sh\nexec node " + Downstream.nodeModules().resolveSibling("lab-server.mjs") + "\n");
        Files.setPosixFilePermissions(command, PosixFilePermissions.fromString("rwx------"));

        // the catalog's tools are there a moment before its listeners are told
        Downstream.await("a later start came up and the listener was told", Duration.ofSeconds(90),
                () -> !told.isEmpty() && told.get(told.size() - 1).stream()
                        .anyMatch(tool -> tool.name().equals("late__get_count")));
        assertThat(catalog.servers().get(0).state()).isEqualTo(ToolCatalog.ServerStatus.State.UP);
        assertThat(catalog.tools()).extracting(CatalogTool::name).contains("late__get_count");
    }

    @Test
    void aServerThatExitsBeforeItAnswersIsNamedWithItsExitCodeAndWhileItFailsSoNeitherThatNorItsLinesAreSaidAgain()
            throws InterruptedException {
        McpServerSettings failing = new McpServerSettings("failing", "node",
                List.of("-e", "console.error('boom: no API key'); process.exit(3)"), Map.of(), null, true);
        List<String> stderr = new CopyOnWriteArrayList<>();
        try (CapturedLog log = new CapturedLog(java.util.logging.Level.FINE)) {
            catalog = new McpToolCatalog(List.of(failing), CALL_TIMEOUT, Duration.ofHours(1), stderr::add,
                    Clock.systemUTC()).start();
            catalogs.add(catalog);

            assertThat(catalog.servers().get(0).reason()).isEqualTo("node exited (code 3) before it answered");
            Downstream.await("the first retry failed", Duration.ofSeconds(60),
                    () -> log.lines().stream().anyMatch(line -> line.contains("trying again in 2 s")));
            assertThat(log.lines()).filteredOn(line -> line.startsWith("server failing")).as("the same reason each time")
                    .containsExactly("server failing: node exited (code 3) before it answered; trying again in 1 s, then"
                            + " with backoff while it fails",
                            "server failing: node exited (code 3) before it answered; trying again in 2 s");
            assertThat(stderr).as("a retry that fails the same way says nothing again")
                    .containsExactly("failing: boom: no API key");
        }
    }

    @Test
    void aCatalogClosedWhileItsServersAreBeingStartedLeavesNoProcessBehind() throws Exception {
        String marker = "slow-" + java.util.UUID.randomUUID();
        McpServerSettings server = new McpServerSettings("slow", "node", List.of("-e", "setInterval(() => {}, 1000)",
                marker), Map.of(), null, true);
        for (int i = 0; i < 20; i++) {
            new McpToolCatalog(List.of(server), CALL_TIMEOUT, Duration.ofHours(1), line -> { }, Clock.systemUTC())
                    .startInBackground().close();
        }
        // servers start one after another on one thread: once this one is up, every start above has spawned or not
        catalog = new McpToolCatalog(List.of(Downstream.lab("lab", true)), CALL_TIMEOUT, Duration.ofHours(1), line -> { },
                Clock.systemUTC()).start();
        catalogs.add(catalog);
        Downstream.await("every server a closed catalog started has ended", Duration.ofSeconds(30),
                () -> ProcessHandle.current().descendants().noneMatch(process -> process.isAlive()
                        && process.info().arguments().map(List::of).orElse(List.of()).contains(marker)));
    }

    @Test
    void periodicRediscoveryFindsAQuietSchemaChange() throws InterruptedException {
        catalog = new McpToolCatalog(List.of(Downstream.lab("lab", true)), CALL_TIMEOUT, Duration.ofSeconds(1),
                line -> { }, Clock.systemUTC()).start();
        catalogs.add(catalog);
        awaitConnected(catalog);
        Gateway gateway = Gateway.builder(catalog, StoreGuard.of(new MemoryCacheStore(100, Clock.systemUTC())),
                versions, new GatewayPolicy(List.of(new GatewayPolicy.Server("lab", false, true)), List.of()), CachePolicy.DEFAULTS).build();
        String before = versions.versions().get("lab__get_count");
        gateway.call("lab__get_count", Map.of());

        gateway.call("lab__set_description", Map.of("tool", "get_count", "description", "Changed, quietly.",
                "notify", false));

        Downstream.await("the periodic discovery's new digest", CALL_TIMEOUT,
                () -> !before.equals(versions.versions().get("lab__get_count")));
        assertThat(answer(gateway.call("lab__get_count", Map.of())).get("served").intValue()).isEqualTo(2);
    }

    @Test
    void eachStderrLineOfADownstreamServerIsPrefixedWithItsName() throws InterruptedException {
        List<String> lines = new CopyOnWriteArrayList<>();
        catalog = new McpToolCatalog(List.of(Downstream.lab("lab", true)), CALL_TIMEOUT, Duration.ofHours(1),
                lines::add, Clock.systemUTC()).start();
        catalogs.add(catalog);

        catalog.call("lab__sleep", Map.of("ms", 1));

        Downstream.await("the sleep line", CALL_TIMEOUT, () -> lines.contains("lab: sleeping 1 ms"));
        assertThat(lines).contains("lab: lab server ready").allMatch(line -> line.startsWith("lab: "));
    }

    @Test
    void untrustedAnnotationsCacheNothingWithoutARule() {
        McpServerSettings untrusted = Downstream.lab("lab", false);
        Gateway gateway = gateway(List.of(new ServerEntry(untrusted, false)),
                List.of(ToolCacheRule.cache("lab__get_o*", Duration.ofMinutes(1), 10)),
                new MemoryCacheStore(100, Clock.systemUTC()));

        gateway.call("lab__get_count", Map.of());
        gateway.call("lab__get_other", Map.of());

        assertThat(answer(gateway.call("lab__get_count", Map.of())).get("served").intValue()).isEqualTo(2);
        assertThat(answer(gateway.call("lab__get_other", Map.of())).get("served").intValue()).isEqualTo(1);
    }

    @Test
    void createThenReadOnTheReferenceServersNeverReturnsTheStateBeforeTheCreate() throws IOException {
        Path root = Files.createDirectories(dir.resolve("files"));
        Files.writeString(root.resolve("note.txt"), "first");
        Gateway gateway = gateway(List.of(new ServerEntry(Downstream.memory(dir), true),
                new ServerEntry(Downstream.filesystem(root), true)), List.of(),
                new MemoryCacheStore(100, Clock.systemUTC()));
        String note = root.resolve("note.txt").toString();

        String empty = gateway.call("memory__read_graph", Map.of()).json();
        gateway.call("memory__create_entities", Map.of("entities", List.of(
                Map.of("name", "execache", "entityType", "tool", "observations", List.of("caches")))));
        String graph = gateway.call("memory__read_graph", Map.of()).json();
        String before = gateway.call("fs__read_text_file", Map.of("path", note)).json();
        gateway.call("fs__write_file", Map.of("path", note, "content", "second"));
        String after = gateway.call("fs__read_text_file", Map.of("path", note)).json();

        assertThat(empty).doesNotContain("execache");
        assertThat(graph).contains("execache");
        assertThat(before).contains("first");
        assertThat(after).contains("second");
        assertThat(gateway.stats().get("memory__read_graph").hits()).isZero();
        gateway.call("fs__read_text_file", Map.of("path", note));
        assertThat(gateway.stats().get("fs__read_text_file").hits()).isEqualTo(1);
    }
}
