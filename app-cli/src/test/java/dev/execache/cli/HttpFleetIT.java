package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.store.redis.RedisServerProcess;
import dev.execache.mcp.server.RawHttp;
import dev.execache.gateway.Downstream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fleet as it is deployed: three {@code serve --http} instances on one redis-server, behind a
 * real nginx (Debian's nginx-light, see {@link SystemPeer}),
 * everything on loopback ports. Both eras work through the balancer, a 2025-era session opened on one
 * instance is served by another and ended everywhere at once, one run answers identical requests sent to
 * several instances at once, and an instance killed mid-run costs its calls only.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HttpFleetIT {
    private static final Map<String, String> NO_POOL = Map.of("EXECACHE_WARM_POOL", "0");

    @TempDir
    static Path dir;

    private static RedisServerProcess redis;
    private static final List<HttpServeProcess> fleet = new ArrayList<>();
    private static Process nginx;
    private static int port;
    private static final ExecutorService callers = Executors.newCachedThreadPool();

    @BeforeAll
    static void start() throws Exception {
        Path binary = SystemPeer.NGINX.require();
        redis = RedisServerProcess.start();
        // a server behind them, so that 2025-era agents get sessions
        Path config = Files.writeString(dir.resolve("execache.yaml"), """
                servers:
                  lab:
                    command: node
                    args: ["%s"]
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs")));
        for (int i = 0; i < 3; i++) {
            fleet.add(HttpServeProcess.start(NO_POOL, "--store", "redis", "--redis-url", redis.url() + "/4",
                    "--config", config.toString(), "--http", "127.0.0.1:0", "--timeout", "20s"));
        }
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        String upstreams = fleet.stream().map(server -> "    server 127.0.0.1:" + server.port()
                + " max_fails=1 fail_timeout=30s;").collect(Collectors.joining("\n"));
        Path conf = dir.resolve("nginx.conf");
        Files.writeString(conf, """
                daemon off;
                master_process off;
                pid %1$s/nginx.pid;
                error_log %1$s/error.log warn;
                events { worker_connections 256; }
                http {
                  access_log off;
                  client_body_temp_path %1$s/body;
                  proxy_temp_path %1$s/proxy;
                  fastcgi_temp_path %1$s/fastcgi;
                  uwsgi_temp_path %1$s/uwsgi;
                  scgi_temp_path %1$s/scgi;
                  upstream execache {
                %2$s
                    keepalive 16;
                  }
                  server {
                    listen 127.0.0.1:%3$d;
                    location /mcp {
                      proxy_pass http://execache;
                      proxy_http_version 1.1;
                      proxy_set_header Connection "";
                      proxy_set_header Host $host;
                      proxy_buffering off;
                      proxy_read_timeout 120s;
                    }
                  }
                }
                """.formatted(dir, upstreams, port));
        nginx = new ProcessBuilder(binary.toString(), "-c", conf.toString(), "-p", dir.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("nginx.out").toFile()).start();
        ServeWithTypeScriptClientIT.awaitCondition(() -> {
            try {
                return RawHttp.post(port, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", Map.of()).status() == 200;
            } catch (IOException e) {
                return !nginx.isAlive() && fail();
            }
        });
    }

    private static boolean fail() {
        try {
            throw new AssertionError("nginx ended: " + Files.readString(dir.resolve("nginx.out"))
                    + Files.readString(dir.resolve("error.log")));
        } catch (IOException e) {
            throw new AssertionError("nginx ended", e);
        }
    }

    @AfterAll
    static void stop() throws Exception {
        callers.shutdownNow();
        if (nginx != null) {
            nginx.destroy();
            nginx.waitFor(30, TimeUnit.SECONDS);
        }
        for (HttpServeProcess server : fleet) {
            server.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    private static String url() {
        return "http://127.0.0.1:" + port + "/mcp";
    }

    private static JsonNode erasClient(String mode) throws Exception {
        Path scripts = TypeScriptClient.nodeModules().getParent();
        Process node = new ProcessBuilder("node", scripts.resolve("eras-client.mjs").toString(), mode, "http", url())
                .directory(scripts.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8))) {
            String line = out.readLine();
            node.waitFor(2, TimeUnit.MINUTES);
            assertThat(line).isNotNull();
            return TypeScriptClient.JSON.readTree(line);
        }
    }

    private static String call(int id, String code) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"execute_code\","
                + "\"arguments\":{\"code\":" + TypeScriptClient.JSON.valueToTree(code) + "}}}";
    }

    /** Sends each body through the balancer at the same moment. */
    private static List<Future<RawHttp.Answer>> sendAtOnce(List<String> bodies) {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<RawHttp.Answer>> answers = new ArrayList<>();
        for (String body : bodies) {
            answers.add(callers.submit(() -> {
                go.await();
                return RawHttp.post(port, body, Map.of("Accept", "application/json"));
            }));
        }
        go.countDown();
        return answers;
    }

    @Test
    @Order(1)
    void bothErasWorkThroughTheBalancer() throws Exception {
        for (String mode : List.of("legacy", "pinned")) {
            JsonNode out = erasClient(mode);

            assertThat(out.has("thrown")).as(out.path("thrown").asText()).isFalse();
            assertThat(out.get("era").textValue()).isEqualTo(mode.equals("legacy") ? "legacy" : "modern");
            assertThat(out.at("/first/structured/result/sum").intValue()).isEqualTo(3);
            assertThat(out.at("/second/structured/cache").textValue()).isEqualTo("hit");
        }
    }

    @Test
    @Order(0)
    void aSessionIsKnownToEveryInstanceItsEndToo() throws Exception {
        int a = fleet.get(0).port();
        int b = fleet.get(1).port();
        RawHttp.Answer opened = RawHttp.post(a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                + "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
                Map.of());
        String session = opened.header("Mcp-Session-Id");
        String ping = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";

        RawHttp.Answer servedByB = RawHttp.post(b, ping, Map.of("Mcp-Session-Id", session));
        RawHttp.Answer madeUp = RawHttp.post(b, ping, Map.of("Mcp-Session-Id", "0123456789abcdef0123456789abcdef"));
        RawHttp.Answer endedOnB = RawHttp.send(b, "DELETE", "/mcp", null, Map.of("Mcp-Session-Id", session));
        RawHttp.Answer afterOnA = RawHttp.post(a, ping, Map.of("Mcp-Session-Id", session));
        RawHttp.Answer afterOnB = RawHttp.post(b, ping, Map.of("Mcp-Session-Id", session));

        assertThat(opened.status()).isEqualTo(200);
        assertThat(session).matches("[0-9a-f]{32}");
        assertThat(servedByB.status()).as("a session opened on A, served by B").isEqualTo(200);
        assertThat(madeUp.status()).as("an id no instance opened").isEqualTo(404);
        assertThat(endedOnB.status()).isEqualTo(200);
        assertThat(afterOnA.status()).as("a session ended on B, on A").isEqualTo(404);
        assertThat(afterOnB.status()).isEqualTo(404);
    }

    @Test
    @Order(2)
    void identicalRequestsSentToSeveralInstancesAtOnceRunOnce() throws Exception {
        String code = "const until = Date.now() + 1500; while (Date.now() < until) {} return crypto.randomUUID()";
        List<String> bodies = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            bodies.add(call(i, code));
        }

        List<JsonNode> answers = new ArrayList<>();
        for (Future<RawHttp.Answer> answer : sendAtOnce(bodies)) {
            answers.add(answer.get(2, TimeUnit.MINUTES).json().at("/result/structuredContent"));
        }

        Set<String> nonces = answers.stream().map(answer -> answer.get("result").textValue()).collect(Collectors.toSet());
        assertThat(nonces).as("one execution answered all six").hasSize(1);
        assertThat(answers.stream().filter(answer -> answer.get("cache").textValue().equals("miss"))).hasSize(1);
    }

    @Test
    @Order(3)
    void anInstanceKilledMidRunCostsOnlyItsOwnCalls() throws Exception {
        List<String> bodies = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            bodies.add(call(i, "const until = Date.now() + 2500; while (Date.now() < until) {} return " + i));
        }
        List<Future<RawHttp.Answer>> answers = sendAtOnce(bodies);
        HttpServeProcess victim = fleet.get(0);
        ServeWithTypeScriptClientIT.awaitCondition(() -> !ServeWithTypeScriptClientIT.denoUnder(victim.handle()).isEmpty());

        victim.handle().destroyForcibly();

        int failed = 0;
        for (int i = 0; i < answers.size(); i++) {
            RawHttp.Answer answer = answers.get(i).get(2, TimeUnit.MINUTES);
            if (answer.status() != 200) {
                failed++;
                assertThat(answer.status()).as("a call the killed instance had").isEqualTo(502);
                continue;
            }
            assertThat(answer.json().at("/result/structuredContent/result").intValue()).isEqualTo(i);
        }
        assertThat(failed).as("the killed instance's calls").isBetween(1, 3);
        for (int i = 0; i < 3; i++) {
            RawHttp.Answer after = RawHttp.post(port, call(100 + i, "return 'after " + i + "'"),
                    Map.of("Accept", "application/json"));
            assertThat(after.status()).isEqualTo(200);
            assertThat(after.json().at("/result/structuredContent/result").textValue()).isEqualTo("after " + i);
        }
    }
}
