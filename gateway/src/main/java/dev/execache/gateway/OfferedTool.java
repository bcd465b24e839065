package dev.execache.gateway;

import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import java.util.Objects;

/**
 * A tool serve offers: its definition and what answers a call of it. Unlike the SDK's tool specification, the call
 * takes who makes it as a parameter, from the transport.
 */
public record OfferedTool(Tool tool, Handler handler) {
    /** Answers one call; never throws for anything the call asks (a bad argument is a tool error). */
    @FunctionalInterface
    public interface Handler {
        CallToolResult call(CallToolRequest request, RequestOrigin origin);
    }

    public OfferedTool {
        Objects.requireNonNull(tool, "tool must not be null");
        Objects.requireNonNull(handler, "handler must not be null");
    }

    public CallToolResult call(CallToolRequest request, RequestOrigin origin) {
        return handler.call(request, origin);
    }
}
