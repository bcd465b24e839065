package dev.execache.gateway;

import dev.execache.gateway.StartingServers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.execache.core.spi.ToolCatalog.ServerStatus;
import dev.execache.core.spi.ToolCatalog.ServerStatus.State;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Which starting servers a call or a run waits for, and that what they brought is offered after. */
class StartingServersTest {
    private final ScriptedCatalog catalog = new ScriptedCatalog();
    private final AtomicInteger offers = new AtomicInteger();
    /** github and jira starting, code may call github and memory but not jira; memory is up. */
    private StartingServers starting;

    @BeforeEach
    void setUp() {
        catalog.servers = List.of(new ServerStatus("github", State.STARTING, null, 0),
                new ServerStatus("jira", State.STARTING, null, 0), new ServerStatus("memory", State.UP, null, 3));
        starting = new StartingServers(catalog, Set.of("github", "memory"), offers::incrementAndGet);
    }

    @Test
    void aRunWaitsOnlyForStartingServersItsCodeNamesAndMayCall() throws InterruptedException {
        starting.awaitNamedIn("await tools.jira.search({}); await tools.memory.read_graph({})");
        assertThat(catalog.awaited).isEmpty();
        assertThat(offers).hasValue(0);

        starting.awaitNamedIn("return await tools.github.get_issue({number: 1})");
        assertThat(catalog.awaited).containsExactly("github");
        assertThat(offers).hasValue(1);
    }

    @Test
    void aCallWaitsForTheServerItsToolNames() throws InterruptedException {
        assertThat(starting.awaitServerOf("execute_code")).isFalse();
        assertThat(starting.awaitServerOf("jira__search")).isTrue();

        assertThat(catalog.awaited).containsExactly("jira");
        assertThat(offers).hasValue(1);
    }

    @Test
    void waitingForAllWaitsForEachStartingServer() throws InterruptedException {
        assertThat(starting.any()).isTrue();

        starting.awaitAll();

        assertThat(catalog.awaited).containsExactly("github", "jira");
        assertThat(offers).hasValue(1);
        catalog.servers = List.of(new ServerStatus("memory", State.UP, null, 3));
        assertThat(starting.any()).isFalse();
    }

    @Test
    void waitingForInstructionsWaitsForEachStartingServerToAnswerInitializeNotForItsTools() {
        CountDownLatch toolsListed = new CountDownLatch(1);
        List<String> introduced = new CopyOnWriteArrayList<>();
        ScriptedCatalog listing = new ScriptedCatalog() {
            @Override
            public void awaitStart(String server) {
                super.awaitStart(server);
                try {
                    toolsListed.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }

            @Override
            public void awaitIntroduction(String server) {
                introduced.add(server);
            }
        };
        listing.servers = catalog.servers;
        StartingServers waiting = new StartingServers(listing, Set.of(), offers::incrementAndGet);

        // the deadline is far: returning before it shows the wait ended when the servers had answered initialize
        assertTimeoutPreemptively(Duration.ofMinutes(1),
                () -> waiting.awaitIntroductionsUntil(Instant.now().plus(Duration.ofMinutes(5))));

        assertThat(introduced).containsExactly("github", "jira");
        assertThat(listing.awaited).isEmpty();
        assertThat(offers).hasValue(0);
        toolsListed.countDown();
    }

    @Test
    void waitingUntilADeadlineThatHasPassedWaitsForNone() throws InterruptedException {
        starting.awaitAllUntil(Instant.now().minusSeconds(1));
        starting.awaitAllUntil(Instant.MIN);

        assertThat(catalog.awaited).isEmpty();
    }

    @Test
    void waitingUntilADeadlineWaitsForEachStartingServerAndReturnsByThenForOneThatDoesNotComeUp() {
        CountDownLatch comesUp = new CountDownLatch(1);
        ScriptedCatalog slow = new ScriptedCatalog() {
            @Override
            public void awaitStart(String server) {
                super.awaitStart(server);
                try {
                    comesUp.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        slow.servers = catalog.servers;
        StartingServers waiting = new StartingServers(slow, Set.of(), offers::incrementAndGet);

        assertTimeoutPreemptively(Duration.ofMinutes(1),
                () -> waiting.awaitAllUntil(Instant.now().plusMillis(200)), "returned by its deadline");

        assertThat(slow.awaited).containsExactly("github");
        comesUp.countDown();
    }
}
