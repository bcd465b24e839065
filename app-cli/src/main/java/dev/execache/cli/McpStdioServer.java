package dev.execache.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * An MCP server on a pair of streams (the process's stdin and stdout), offering
 * {@link ServeTools}. It serves from construction until input ends or {@link #close()}.
 */
final class McpStdioServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("dev.execache.cli");
    private static final Duration CLOSE_LIMIT = Duration.ofSeconds(5);
    static final String INSTRUCTIONS = "execache runs TypeScript/JavaScript in a locked-down Deno sandbox and caches "
            + "the results: call execute_code with the code (the body of an async function; `return` gives the result) "
            + "and a context object. The same code, context and tool versions are never run twice: a repeat is a cache "
            + "hit that returns at once. Declare the tools the code depends on in `tools` so that a new version of one "
            + "invalidates only its results.";

    private final McpSyncServer server;
    private final StdioTransport transport;
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();

    McpStdioServer(ServeTools tools, String version, InputStream in, OutputStream out, Duration drainLimit) {
        McpJsonMapper mapper = new JacksonMcpJsonMapper(new ObjectMapper());
        this.transport = new StdioTransport(in, out, mapper, drainLimit);
        this.server = McpServer.sync(transport)
                .serverInfo("execache", version)
                .instructions(INSTRUCTIONS)
                .jsonMapper(mapper)
                .capabilities(McpSchema.ServerCapabilities.builder().tools(tools.proxied() != null).build())
                .tools(tools.specifications())
                .build();
        if (tools.proxied() != null) {
            tools.proxied().onChange(this::replaceTools);
        }
    }

    /** Offers new or changed tools and withdraws others; the client hears notifications/tools/list_changed. */
    private void replaceTools(List<SyncToolSpecification> changed, List<String> withdrawn) {
        withdrawn.forEach(server::removeTool);
        changed.forEach(server::addTool);
    }

    /** Blocks until input has ended (and every request read has been answered) or {@link #close()} was called. */
    void awaitEnd() throws InterruptedException {
        try {
            CompletableFuture.anyOf(transport.ended(), stopped).get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    @Override
    public void close() {
        if (!stopped.complete(null)) {
            return;
        }
        CompletableFuture<Void> closing = CompletableFuture.runAsync(server::closeGracefully);
        try {
            closing.get(CLOSE_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            LOG.log(Level.DEBUG, "MCP server did not close gracefully: " + e);
            server.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.close();
        }
    }
}
