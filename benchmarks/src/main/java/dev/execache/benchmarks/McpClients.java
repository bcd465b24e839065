package dev.execache.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The MCP clients the gateway and bridge figures measure with: the MCP Java SDK's, over stdio,
 * the same for a downstream server called directly and for {@code execache serve} in front of it.
 */
final class McpClients {
    private McpClients() {
    }

    /** A client of the lab server, started with node. */
    static McpSyncClient direct(Path lab) {
        return client("node", List.of(lab.toString()));
    }

    /** A client of {@code execache serve} (memory store) with the lab server as its one downstream server. */
    static McpSyncClient serve(Path jar, Path lab, String tempPrefix) throws IOException {
        List<String> command = serveCommand(jar, lab, tempPrefix);
        return client(command.get(0), command.subList(1, command.size()));
    }

    /** The command line of {@code execache serve} (memory store) in front of the lab server. */
    static List<String> serveCommand(Path jar, Path lab, String tempPrefix) throws IOException {
        Path dir = Files.createTempDirectory(tempPrefix);
        Path config = Files.writeString(dir.resolve("execache.yaml"),
                "servers:\n  lab:\n    command: node\n    args: [\"" + lab + "\"]\n");
        String java = ProcessHandle.current().info().command().orElse("java");
        return List.of(java, "-jar", jar.toString(), "serve", "--store", "memory", "--config", config.toString());
    }

    /** Calls a tool; returns how long the round trip took in nanoseconds. A tool error ends the benchmark. */
    static long call(McpSyncClient client, String tool, Map<String, Object> args) {
        long start = System.nanoTime();
        McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest(tool, args));
        long took = System.nanoTime() - start;
        if (Boolean.TRUE.equals(result.isError())) {
            throw new IllegalStateException(tool + " failed: " + result.content());
        }
        return took;
    }

    static McpSyncClient client(String command, List<String> args) {
        StdioClientTransport transport = new StdioClientTransport(
                ServerParameters.builder(command).args(args).build(), new JacksonMcpJsonMapper(new ObjectMapper()));
        transport.setStdErrorHandler(line -> { });
        McpSyncClient client = McpClient.sync(transport)
                .requestTimeout(Duration.ofSeconds(60))
                .initializationTimeout(Duration.ofSeconds(60))
                .clientInfo(new McpSchema.Implementation("execache-bench", "1"))
                .build();
        client.initialize();
        return client;
    }
}
