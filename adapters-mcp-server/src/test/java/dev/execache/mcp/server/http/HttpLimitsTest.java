package dev.execache.mcp.server.http;

import dev.execache.gateway.ServeTools;
import java.util.Set;
import java.util.List;
import java.net.InetAddress;
import dev.execache.gateway.TestTools;
import dev.execache.mcp.server.RawHttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.execache.core.ExecutionResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * What bounds the HTTP server: how many requests it answers at once, how long a client may stay
 * silent, and its stop (new requests refused, the ones being answered let finish).
 */
class HttpLimitsTest {
    private static final String PING = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{}}";
    private static final String RUNNING = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
            + "{\"name\":\"execute_code\",\"arguments\":{\"code\":\"wait\"}}}";

    private final CountDownLatch started = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);

    /** A run that goes on until the test lets it go, even when it is told to stop (as a slow run would). */
    private ServeTools waitingTools() {
        return TestTools.over(request -> {
            started.countDown();
            boolean interrupted = false;
            while (true) {
                try {
                    release.await();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            return ExecutionResult.success("1", "", Duration.ofMillis(1));
        });
    }

    private static CompletableFuture<RawHttp.Answer> postInBackground(int port, String body) {
        return CompletableFuture.supplyAsync(unchecked(() -> RawHttp.post(port, body, Map.of("Accept", "application/json"))));
    }

    private interface Call<T> {
        T call() throws IOException;
    }

    private static <T> Supplier<T> unchecked(Call<T> call) {
        return () -> {
            try {
                return call.call();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
    }

    @Test
    void aRequestBeyondTheBoundOnRequestsAtOnceIsRefusedAtOnceWith503AndRetryAfter() throws Exception {
        try (McpHttpServer server = new McpHttpServer(waitingTools(), "test",
                http(1, Duration.ofSeconds(30), Duration.ofSeconds(30))).start()) {
            CompletableFuture<RawHttp.Answer> first = postInBackground(server.port(), RUNNING);
            started.await();

            RawHttp.Answer refused = RawHttp.post(server.port(), PING, Map.of());
            release.countDown();

            assertThat(refused.status()).isEqualTo(503);
            assertThat(refused.header("Retry-After")).isEqualTo("1");
            assertThat(refused.json().at("/error/message").textValue())
                    .isEqualTo("Service Unavailable: 1 requests are being answered at once; try again");
            assertThat(first.get(60, TimeUnit.SECONDS).status()).isEqualTo(200);
            // the bound is freed once Jetty has completed the first request, a moment after its client has the answer
            await("the bound freed").atMost(Duration.ofSeconds(60))
                    .until(() -> RawHttp.post(server.port(), PING, Map.of()).status() == 200);
        }
    }

    @Test
    void aSilentClientIsCutOff() throws Exception {
        try (McpHttpServer server = new McpHttpServer(TestTools.over(request -> null), "test",
                http(4, Duration.ofMillis(500), Duration.ofSeconds(30))).start();
                Socket slow = new Socket("127.0.0.1", server.port())) {
            slow.setSoTimeout(60_000);
            slow.getOutputStream().write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n".getBytes(StandardCharsets.US_ASCII));
            slow.getOutputStream().flush();

            assertThat(slow.getInputStream().read()).as("the connection is closed, not held").isEqualTo(-1);
        }
    }

    @Test
    void aStopRefusesNewRequestsWith503AndLetsTheOnesBeingAnsweredFinish() throws Exception {
        McpHttpServer server = new McpHttpServer(waitingTools(), "test",
                http(4, Duration.ofSeconds(30), Duration.ofSeconds(60))).start();
        int port = server.port();
        CompletableFuture<RawHttp.Answer> running = postInBackground(port, RUNNING);
        started.await();

        CompletableFuture<Void> stopped = CompletableFuture.runAsync(server::close);
        await().atMost(Duration.ofSeconds(60)).until(() -> RawHttp.post(port, PING, Map.of()).status() == 503);
        RawHttp.Answer refused = RawHttp.post(port, PING, Map.of());
        RawHttp.Answer figures = RawHttp.send(port, "GET", "/dashboard.json", null, Map.of());
        boolean stoppedBeforeTheAnswer = stopped.isDone();
        release.countDown();
        RawHttp.Answer answered = running.get(60, TimeUnit.SECONDS);
        stopped.get(60, TimeUnit.SECONDS);

        assertThat(refused.json().at("/error/message").textValue()).contains("shutting down");
        assertThat(figures.status()).isEqualTo(503);
        assertThat(figures.body()).isEqualTo("the server is shutting down\n");
        assertThat(stoppedBeforeTheAnswer).as("the stop waits for the request being answered").isFalse();
        assertThat(answered.status()).isEqualTo(200);
        assertThat(answered.json().get("id").intValue()).isEqualTo(1);
    }

    /** On loopback, any free port, no token; at most {@code atOnce} requests answered at once. */
    private static HttpServeSettings http(int atOnce, Duration idleTimeout, Duration drainLimit) {
        return HttpServeSettings.of(InetAddress.getLoopbackAddress(), 0, List.of(), Set.of(), drainLimit)
                .withLimits(HttpServeSettings.DEFAULT_MAX_BODY_BYTES, atOnce, idleTimeout);
    }
}
