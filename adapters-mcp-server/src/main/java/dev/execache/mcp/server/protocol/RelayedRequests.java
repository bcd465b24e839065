package dev.execache.mcp.server.protocol;

import dev.execache.gateway.Json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.spi.AgentRefusedException;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The requests of the servers behind execache (sampling, elicitation, roots) that a transport relayed to its client,
 * until the client answers: one transport's, by the id execache gave each, so that the client's response, however it
 * comes (a line on stdio, a POST over HTTP), finds the request it answers.
 */
public final class RelayedRequests {
    private final Map<String, CompletableFuture<ObjectNode>> waiting = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();

    /**
     * The params of a server's request to the agent, as JSON.
     *
     * @throws AgentRefusedException when they are not JSON
     */
    public static JsonNode params(String method, String params) {
        try {
            return Json.MAPPER.readTree(params);
        } catch (IOException e) {
            throw new AgentRefusedException(McpSchema.ErrorCodes.INVALID_PARAMS, "the server's " + method
                    + " request is not JSON: " + e.getMessage());
        }
    }

    /**
     * Sends the request with {@code send} and waits for the client's answer, for as long as the client (a person,
     * perhaps) takes; when the waiting thread is interrupted (the call the request belongs to ended), the client is
     * sent notifications/cancelled for it.
     *
     * @param send writes one JSON-RPC message to the client
     * @return the client's result as JSON text
     * @throws AgentRefusedException with the client's error, or why it could not be asked
     */
    public String ask(String method, JsonNode params, Consumer<ObjectNode> send) {
        // unguessable: over HTTP an answer comes as a POST of its own, which must not answer another agent's request
        String id = "execache-ask-" + ids.incrementAndGet() + "-" + java.util.UUID.randomUUID();
        CompletableFuture<ObjectNode> answer = new CompletableFuture<>();
        waiting.put(id, answer);
        try {
            ObjectNode request = Json.MAPPER.createObjectNode();
            request.put("jsonrpc", McpSchema.JSONRPC_VERSION);
            request.put("id", id);
            request.put("method", method);
            request.set("params", params);
            send.accept(request);
            ObjectNode response = answer.get();
            if (response.get("error") instanceof ObjectNode error) {
                throw new AgentRefusedException(error.path("code").asInt(McpSchema.ErrorCodes.INTERNAL_ERROR),
                        error.path("message").asText("the agent refused " + method));
            }
            JsonNode result = response.get("result");
            return Json.write(result == null ? Json.MAPPER.createObjectNode() : result);
        } catch (InterruptedException e) {
            ObjectNode cancelled = Json.MAPPER.createObjectNode();
            cancelled.put("jsonrpc", McpSchema.JSONRPC_VERSION);
            cancelled.put("method", JsonRpc.CANCELLED);
            ObjectNode cancelParams = cancelled.putObject("params");
            cancelParams.put("requestId", id);
            cancelParams.put("reason", "the call it belonged to ended");
            try {
                send.accept(cancelled);
            } catch (RuntimeException gone) {
                // the client is gone: nothing to tell it
            }
            // kept, so that the call this request belonged to stops too (a url server's request is ended by it)
            Thread.currentThread().interrupt();
            throw new AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "the call ended before the agent"
                    + " answered " + method);
        } catch (ExecutionException e) {
            throw new AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "the agent did not answer " + method
                    + ": " + e.getCause().getMessage());
        } finally {
            waiting.remove(id);
        }
    }

    /** Takes a client's response: true when it answers a relayed request (which then has its answer). */
    public boolean answered(JsonNode id, ObjectNode response) {
        CompletableFuture<ObjectNode> answer = id != null && id.isTextual() ? waiting.get(id.textValue()) : null;
        if (answer == null) {
            return false;
        }
        answer.complete(response);
        return true;
    }

    /** Every request still waiting fails: the client is gone, or execache stops. */
    public void failAll(String why) {
        waiting.values().forEach(answer -> answer.completeExceptionally(new IOException(why)));
    }
}
