package dev.execache.benchmarks.process;

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
        return client(List.of("node", lab.toString()));
    }

    /** A client of {@code execache serve} (memory store) with the lab server as its one downstream server. */
    static McpSyncClient serve(Path jar, Path lab, String tempPrefix) throws IOException {
        return client(serveCommand(jar, lab, tempPrefix));
    }

    /** The command line of {@code execache serve} (memory store) in front of the lab server. */
    static List<String> serveCommand(Path jar, Path lab, String tempPrefix) throws IOException {
        return Serve.command(jar, Files.createTempDirectory(tempPrefix), lab);
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

    /** A client of the stdio server started by this command line. */
    static McpSyncClient client(List<String> command) {
        StdioClientTransport transport = new StdioClientTransport(
                ServerParameters.builder(command.get(0)).args(command.subList(1, command.size())).build(), new JacksonMcpJsonMapper(new ObjectMapper()));
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
