package dev.execache.tools.mcp;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The one JSON mapper of the servers behind execache, shared by all of them. Jackson builds a serializer or
 * deserializer the first time a mapper meets a type, and keeps it in that mapper: a mapper per server built the MCP
 * types' anew for each server, tens of milliseconds of CPU each on the way to its tools.
 */
final class McpJson {

    private static final Logger LOG = System.getLogger(McpJson.class.getName());

    static final ObjectMapper JSON = new ObjectMapper();
    static final JacksonMcpJsonMapper MAPPER = new JacksonMcpJsonMapper(JSON);

    private static final AtomicBoolean WARMING = new AtomicBoolean();

    /** A server's answer to initialize, with every part a server may declare. */
    private static final String INITIALIZED = """
            {"jsonrpc":"2.0","id":"warm-up","result":{"protocolVersion":"2025-11-25",
             "capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},
              "prompts":{"listChanged":true},"logging":{},"completions":{},"experimental":{}},
             "serverInfo":{"name":"warm-up","title":"Warm-up","version":"1"},"instructions":"none"}}""";
    /** A server's answer to tools/list, with every part a tool may have. */
    private static final String LISTED = """
            {"jsonrpc":"2.0","id":"warm-up","result":{"tools":[{"name":"read","title":"Read","description":"reads",
             "inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],
              "additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"},
             "outputSchema":{"type":"object","properties":{"text":{"type":"string"}}},
             "annotations":{"title":"Read","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,
              "openWorldHint":false},"_meta":{"a":1}}],"nextCursor":null}}""";

    private McpJson() {
    }

    /**
     * Has the mapper build what a server's start needs (its answers to initialize and tools/list, the requests that
     * ask for them) on a thread of its own, once per process, while the first server's process starts: built on
     * the way, they were CPU between the server's answers and serve's.
     */
    static void warmUpSoon() {
        if (!WARMING.compareAndSet(false, true)) {
            return;
        }
        Thread thread = new Thread(() -> {
            try {
                warmUp();
            } catch (IOException | RuntimeException e) {
                // only ever a cost moved earlier: the servers' own answers build the same on their way
                LOG.log(Level.DEBUG, "the MCP mapper's warm-up stopped: " + e);
            }
        }, "execache-mcp-warm-up");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Writes what a server's start is sent and reads what it answers, as the SDK's client does, and catalogues the
     * tools it read; see {@link #warmUpSoon}.
     *
     * @return the tools it read
     */
    static McpSchema.ListToolsResult warmUp() throws IOException {
        McpSchema.JSONRPCRequest initialize = new McpSchema.JSONRPCRequest(McpSchema.JSONRPC_VERSION,
                McpSchema.METHOD_INITIALIZE, "warm-up", new McpSchema.InitializeRequest("2025-11-25",
                        McpSchema.ClientCapabilities.builder().roots(true).sampling().elicitation().build(),
                        new McpSchema.Implementation("execache", "gateway")));
        MAPPER.convertValue(initialize.params(), new TypeRef<Map<String, Object>>() {
        });
        MAPPER.writeValueAsString(initialize);
        MAPPER.writeValueAsString(new McpSchema.JSONRPCNotification(McpSchema.JSONRPC_VERSION,
                McpSchema.METHOD_NOTIFICATION_INITIALIZED, null));
        MAPPER.writeValueAsString(new McpSchema.JSONRPCRequest(McpSchema.JSONRPC_VERSION,
                McpSchema.METHOD_TOOLS_LIST, "warm-up", new McpSchema.PaginatedRequest(null)));
        McpSchema.JSONRPCResponse initialized = (McpSchema.JSONRPCResponse) McpSchema.deserializeJsonRpcMessage(
                MAPPER, INITIALIZED);
        McpSchema.JSONRPCResponse listed = (McpSchema.JSONRPCResponse) McpSchema.deserializeJsonRpcMessage(
                MAPPER, LISTED);
        McpSchema.ListToolsResult tools = MAPPER.convertValue(listed.result(),
                new TypeRef<McpSchema.ListToolsResult>() {
                });
        McpSchema.Implementation info = MAPPER.convertValue(initialized.result(),
                new TypeRef<McpSchema.InitializeResult>() {
                }).serverInfo();
        // as a server's tools are catalogued: each as a map, and its version
        tools.tools().forEach(tool -> ServerLifecycle.digest("warm-up", info, JSON.convertValue(tool,
                ServerLifecycle.OBJECT), "warm-up"));
        return tools;
    }
}
