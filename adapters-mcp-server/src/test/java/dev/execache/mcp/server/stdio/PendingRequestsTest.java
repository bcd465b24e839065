package dev.execache.mcp.server.stdio;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Waiting until the requests read are answered: what begins once the agent waits for nothing. */
class PendingRequestsTest {
    private final PendingRequests pending = new PendingRequests();

    @Test
    void nothingReadIsNothingToWaitFor() {
        assertThat(pending.awaitAnswered(Duration.ofMinutes(5))).isTrue();
    }

    @Test
    void theWaitEndsWhenTheLastRequestIsAnsweredOrDropped() {
        pending.add(1, "tools/list");
        pending.add(2, "tools/call");
        CompletableFuture<Boolean> waited = CompletableFuture.supplyAsync(() -> pending.awaitAnswered(Duration.ofMinutes(5)));

        pending.answered(1);
        assertThat(waited).isNotDone();
        pending.drop(2);

        assertThat(waited.join()).as("answered well before the five minutes").isTrue();
    }

    @Test
    void aRequestStillUnansweredAtTheLimitIsSaid() {
        pending.add(1, "tools/call");

        assertThat(pending.awaitAnswered(Duration.ofMillis(1))).isFalse();
        assertThat(pending.method(1)).isEqualTo("tools/call");
    }
}
