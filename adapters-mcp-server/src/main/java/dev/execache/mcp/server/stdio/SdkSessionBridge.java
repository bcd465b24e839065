package dev.execache.mcp.server.stdio;

import dev.execache.gateway.InFlightCalls;
import dev.execache.gateway.ServeTools;
import dev.execache.mcp.server.protocol.JsonRpc;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * The SDK's server session on stdio: what of the 2025 era it still answers (initialize, notifications, the client's
 * answers to its requests) reaches it here, and its messages go out through {@link StdioTransport}, an answer to a
 * request cancelled or already answered dropped. initialize's answer carries the instructions of the servers that
 * are connected by then (the SDK's server was built before they joined) and tells the framing the negotiated version.
 */
final class SdkSessionBridge implements McpServerTransportProvider {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");

    private final StdioTransport framing;
    private final McpJsonMapper mapper;
    private final BooleanSupplier initialized;
    private final Runnable start;
    private volatile McpServerSession session;
    /** Null: the SDK session's own (execache's, fixed when the server was built). */
    private volatile Supplier<String> instructions;

    /**
     * @param initialized whether the client of the 2025 era sent notifications/initialized: before, and for a client
     *     of the 2026-07-28 era, the session sends no notifications
     * @param start starts reading, once the session exists
     */
    SdkSessionBridge(StdioTransport framing, McpJsonMapper mapper, BooleanSupplier initialized, Runnable start) {
        this.framing = framing;
        this.mapper = mapper;
        this.initialized = initialized;
        this.start = start;
    }

    /** Whether initialize's answer declares tasks: the SDK's capabilities type has no such field (2.1.0). */
    private volatile BooleanSupplier tasks = () -> false;

    void declareTasksWith(BooleanSupplier offered) {
        this.tasks = offered;
    }

    /** What initialize's answer says: execache's instructions and the servers' that are connected by then. */
    void instructWith(Supplier<String> instructions) {
        this.instructions = instructions;
    }

    @Override
    public void setSessionFactory(McpServerSession.Factory sessionFactory) {
        session = sessionFactory.create(new SessionTransport());
        start.run();
    }

    @Override
    public Mono<Void> notifyClients(String method, Object params) {
        McpServerSession current = session;
        // only to an initialized session: a client of the 2026-07-28 era gets only what it listens for
        return current == null || !initialized.getAsBoolean() ? Mono.empty() : current.sendNotification(method, params);
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Mono.defer(() -> {
            framing.stopReading();
            McpServerSession current = session;
            return current == null ? Mono.empty() : current.closeGracefully();
        });
    }

    /** A message the SDK's session answers: the 2025 era's initialize and tools/list, notifications, responses. */
    void handle(String line, JsonRpc.Request request) {
        McpSchema.JSONRPCMessage parsed;
        try {
            parsed = McpSchema.deserializeJsonRpcMessage(mapper, line);
        } catch (Exception e) {
            String problem = "Invalid Request: not a JSON-RPC 2.0 request, notification or response";
            LOG.log(Level.WARNING, problem + " (" + (line.length() <= 80 ? line : line.substring(0, 77) + "...") + ")");
            if (request != null) {
                framing.deliver(request.idValue(), JsonRpc.error(request.id(), McpSchema.ErrorCodes.INVALID_REQUEST, problem, null));
            }
            return;
        }
        if (request != null) {
            framing.pending().add(InFlightCalls.key(request.idValue()), request.method());
        }
        session.handle(parsed).subscribe(null,
                error -> LOG.log(Level.WARNING, "handling a message failed: " + error.getMessage()));
    }

    private final class SessionTransport implements McpServerTransport {
        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return Mono.fromRunnable(() -> {
                if (!(message instanceof McpSchema.JSONRPCResponse response)) {
                    framing.write(serialize(message));
                    return;
                }
                Object key = InFlightCalls.key(response.id());
                if (framing.pending().takeDropped(key)) {
                    // cancelled, or already answered because the server is shutting down
                    framing.forgetBatchOf(key);
                    return;
                }
                String method = framing.pending().method(key);
                try {
                    McpSchema.JSONRPCResponse answer = response;
                    if (McpSchema.METHOD_INITIALIZE.equals(method)
                            && response.result() instanceof McpSchema.InitializeResult result) {
                        framing.negotiated(result.protocolVersion());
                        Supplier<String> current = instructions;
                        if (current != null) {
                            // the servers behind the gateway join after the SDK's server was built
                            answer = new McpSchema.JSONRPCResponse(response.jsonrpc(), response.id(),
                                    new McpSchema.InitializeResult(result.protocolVersion(), result.capabilities(),
                                            result.serverInfo(), current.get(), result.meta()), null);
                        }
                    }
                    String written = serialize(answer);
                    if (McpSchema.METHOD_INITIALIZE.equals(method) && tasks.getAsBoolean()) {
                        written = withTasks(written);
                    }
                    framing.deliver(response.id(), StdioTransport.withinLimit(written, response.id(), method, size -> StdioTransport.resultLine(
                            response.id(), ServeTools.answerTooLarge(size, ServeTools.MAX_ANSWER_BYTES))));
                } finally {
                    framing.answered(response.id());
                }
            });
        }

        /** initialize's answer with the experimental tasks capability of the servers behind (StatelessProtocol's). */
        private String withTasks(String written) {
            try {
                com.fasterxml.jackson.databind.JsonNode tree = dev.execache.gateway.Json.MAPPER.readTree(written);
                if (tree.path("result").path("capabilities") instanceof com.fasterxml.jackson.databind.node.ObjectNode
                        capabilities) {
                    capabilities.set("tasks", dev.execache.mcp.server.protocol.StatelessProtocol.legacyTasksCapability());
                    return dev.execache.gateway.Json.write(tree);
                }
            } catch (IOException e) {
                // written as the SDK wrote it
            }
            return written;
        }

        private String serialize(McpSchema.JSONRPCMessage message) {
            try {
                return mapper.writeValueAsString(message);
            } catch (IOException e) {
                throw new IllegalStateException("cannot write a message: " + e.getMessage(), e);
            }
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
            return mapper.convertValue(data, typeRef);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return Mono.fromRunnable(framing::stopReading);
        }
    }
}
