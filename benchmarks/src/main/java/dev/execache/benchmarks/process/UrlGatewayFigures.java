package dev.execache.benchmarks.process;

import io.modelcontextprotocol.client.McpSyncClient;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * A url server behind {@code execache serve}: the tests' HTTP lab server (the TypeScript SDK's
 * Streamable HTTP transport, answers as SSE streams) adding 20 ms to every call, called directly
 * by the MCP Java SDK client over Streamable HTTP, and through serve (stdio) by the same SDK
 * client: the medians of the direct call, a hit and a miss, interleaved in one run.
 *
 * <p>{@code java -cp benchmarks.jar dev.execache.benchmarks.process.UrlGatewayFigures EXECACHE_JAR HTTP_LAB_SERVER_MJS [ROUNDS] [DELAY_MS]}
 */
public final class UrlGatewayFigures {
    private UrlGatewayFigures() {
    }

    public static void main(String[] args) throws Exception {
        ServerArguments arguments = ServerArguments.of(args, 101);
        int rounds = arguments.rounds();
        String delay = args.length > 3 ? args[3] : "20";
        Process server = new ProcessBuilder("node", arguments.server().toString(), "--era", "2025", "--delay-ms", delay)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            String line = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8)).readLine();
            String url = "http://127.0.0.1:" + line.substring("listening ".length()).trim();
            Path dir = Files.createTempDirectory("execache-url-gateway-bench");
            Path config = Files.writeString(dir.resolve("execache.yaml"),
                    "servers:\n  lab:\n    url: \"" + url + "/mcp\"\n");
            try (McpSyncClient direct = McpClients.http(url);
                    McpSyncClient gateway = McpClients.client(Serve.command(arguments.jar(), config))) {
                McpClients.Rounds measured = McpClients.rounds(direct, gateway, 20, rounds);
                System.out.printf(Locale.ROOT, "url server adding %s ms a call; rounds: %d, interleaved (direct, miss, hit);"
                        + " medians, MCP Java SDK client (direct: Streamable HTTP; through execache: stdio)%n", delay, rounds);
                measured.print("url server");
            }
        } finally {
            server.destroy();
            server.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
