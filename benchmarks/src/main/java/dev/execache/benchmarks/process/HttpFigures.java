package dev.execache.benchmarks.process;

import dev.execache.benchmarks.support.Samples;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code execache serve --http} answering a cached {@code execute_code} (a hit) against the
 * official TypeScript SDK 2.x's own HTTP server answering a trivial tool, both stateless and
 * spoken to in the 2026-07-28 era by the same client (the JDK's, HTTP/1.1 keep-alive), in one
 * run: the median of one call at a time, and calls per second with 32 clients at once.
 *
 * <p>{@code java -cp benchmarks.jar dev.execache.benchmarks.process.HttpFigures EXECACHE_JAR TS_HTTP_SERVER_MJS [ROUNDS]}
 * (the .mjs is app-cli's test peer, run where its node_modules are installed: app-cli/target/node).
 */
public final class HttpFigures {
    private static final Pattern SERVING = Pattern.compile("serving MCP on (http://\\S+/mcp)");
    private static final Pattern LISTENING = Pattern.compile("listening (\\d+)");
    private static final int CLIENTS = 32;

    private HttpFigures() {
    }

    public static void main(String[] args) throws Exception {
        ServerArguments arguments = ServerArguments.of(args, 2001);
        Path jar = arguments.jar();
        Path tsServer = arguments.server().toAbsolutePath();
        int rounds = arguments.rounds();
        Process execache = new ProcessBuilder("java", "-jar", jar.toString(), "serve", "--store", "memory", "--http", "0")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        Process node = new ProcessBuilder("node", tsServer.toString(), "0").directory(tsServer.getParent().toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            URI execacheUrl = URI.create(firstMatch(new BufferedReader(new InputStreamReader(execache.getErrorStream(),
                    StandardCharsets.UTF_8)), SERVING));
            URI nodeUrl = URI.create("http://127.0.0.1:" + firstMatch(new BufferedReader(new InputStreamReader(
                    node.getInputStream(), StandardCharsets.UTF_8)), LISTENING) + "/mcp");
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(10)).build();
            HttpRequest hit = call(execacheUrl, "execute_code", "{\"code\":\"return 1 + 1\"}");
            HttpRequest trivial = call(nodeUrl, "trivial", "{}");
            check(client, hit, "\"result\":2");
            check(client, trivial, "\"result\":2");
            for (int i = 0; i < 500; i++) {
                send(client, hit);
                send(client, trivial);
            }
            long[] hitNanos = new long[rounds];
            long[] trivialNanos = new long[rounds];
            for (int i = 0; i < rounds; i++) {
                hitNanos[i] = send(client, hit);
                trivialNanos[i] = send(client, trivial);
            }
            double hitMicros = Samples.medianMicros(hitNanos);
            double trivialMicros = Samples.medianMicros(trivialNanos);
            int perClient = Math.max(50, rounds / 4);
            double trivialPerSecond = perSecond(trivial, perClient);
            double hitsPerSecond = perSecond(hit, perClient);
            double trivialPerSecondAgain = perSecond(trivial, perClient);
            double nodePerSecond = Math.max(trivialPerSecond, trivialPerSecondAgain);
            System.out.printf(Locale.ROOT, "HTTP, 2026-07-28, the same client (JDK HttpClient, HTTP/1.1 keep-alive), "
                    + "%d rounds one at a time, then %d clients x %d calls:%n", rounds, CLIENTS, perClient);
            System.out.printf(Locale.ROOT, "  execute_code cache hit via serve --http     median %8.1f us%n", hitMicros);
            System.out.printf(Locale.ROOT, "  TS SDK 2.4.0 HTTP server, trivial tool      median %8.1f us%n", trivialMicros);
            System.out.printf(Locale.ROOT, "  ratio hit / trivial                          %8.2fx (aim: at most 1.0x)%n",
                    hitMicros / trivialMicros);
            System.out.printf(Locale.ROOT, "  %d clients: hits/s via serve --http         %8.0f%n", CLIENTS, hitsPerSecond);
            System.out.printf(Locale.ROOT, "  %d clients: trivial calls/s, TS server      %8.0f (best of two runs)%n",
                    CLIENTS, nodePerSecond);
            System.out.printf(Locale.ROOT, "  ratio hits/s / trivial/s                     %8.2fx (aim: at least 2x)%n",
                    hitsPerSecond / nodePerSecond);
        } finally {
            execache.destroy();
            node.destroy();
            execache.waitFor();
            node.waitFor();
        }
    }

    private static String firstMatch(BufferedReader lines, Pattern pattern) throws IOException {
        String line;
        while ((line = lines.readLine()) != null) {
            Matcher matcher = pattern.matcher(line);
            if (matcher.find()) {
                Thread drain = new Thread(() -> {
                    try {
                        while (lines.readLine() != null) {
                            // keeps the pipe from filling up
                        }
                    } catch (IOException e) {
                        // the process ended
                    }
                });
                drain.setDaemon(true);
                drain.start();
                return matcher.group(1);
            }
        }
        throw new IllegalStateException("the server ended before it listened");
    }

    private static HttpRequest call(URI url, String tool, String arguments) {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":" + arguments + ",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                + "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
        return HttpRequest.newBuilder(url)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "tools/call")
                .header("Mcp-Name", tool)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
    }

    private static void check(HttpClient client, HttpRequest request, String expected) throws Exception {
        HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200 || !response.body().contains(expected)) {
            throw new IllegalStateException(request.uri() + " answered " + response.statusCode() + ": " + response.body());
        }
    }

    private static long send(HttpClient client, HttpRequest request) throws Exception {
        long start = System.nanoTime();
        HttpResponse<byte[]> response = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
        long took = System.nanoTime() - start;
        if (response.statusCode() != 200) {
            throw new IllegalStateException(request.uri() + " answered " + response.statusCode());
        }
        return took;
    }

    /** Calls per second with {@link #CLIENTS} clients, each with its own connection, calling one at a time. */
    private static double perSecond(HttpRequest request, int perClient) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        try {
            List<HttpClient> clients = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                send(client, request);
                clients.add(client);
            }
            List<Callable<Void>> work = new ArrayList<>();
            for (HttpClient client : clients) {
                work.add(() -> {
                    for (int i = 0; i < perClient; i++) {
                        send(client, request);
                    }
                    return null;
                });
            }
            long start = System.nanoTime();
            for (Future<Void> done : pool.invokeAll(work)) {
                done.get();
            }
            return (double) CLIENTS * perClient / ((System.nanoTime() - start) / 1e9);
        } finally {
            pool.shutdownNow();
        }
    }
}
