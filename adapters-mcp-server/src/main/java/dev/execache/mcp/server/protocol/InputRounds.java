package dev.execache.mcp.server.protocol;

import dev.execache.gateway.Json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.spi.AgentRefusedException;
import dev.execache.core.spi.ToolCatalog;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Gateway calls of the 2026-07-28 era, whose client is asked something only through an {@code input_required}
 * result (multi-round-trip requests): the call runs on a thread of its own; when its server asks the agent
 * (sampling, elicitation, roots), the answer to the agent's request is {@code input_required} with those requests and
 * a {@code requestState}; the agent's retry (the same request with {@code inputResponses} and that
 * {@code requestState}) hands the answers to the waiting server and goes on waiting for the call. A 2026-07-28
 * server's round reaches the agent as the server made it (all its requests, their keys, its {@code requestState}),
 * and the agent's answers reach the server as the agent gave them; a request of a server of the initialize era is
 * one round of its own, under a key and state of execache's. The call waits in this process; a retry whose
 * {@code requestState} names no call waiting here (another instance of a fleet began it, or the agent answered
 * before it was asked) starts the call again with the agent's answers and state as it gave them, for the server to
 * judge.
 */
final class InputRounds {
    private static final ExecutorService CALLS = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "execache-mcp-round");
        thread.setDaemon(true);
        return thread;
    });

    /** The calls waiting for the agent's answers, by the requestState their answer gave the agent. */
    private final Map<String, Round> rounds = new ConcurrentHashMap<>();
    private final AtomicLong keys = new AtomicLong();

    /** What a call did next: ended ({@link Done}), or asked the agent something ({@link Asked}). */
    sealed interface Step permits Done, Asked {
    }

    record Done(CallToolResult result) implements Step {
    }

    /**
     * @param inputRequests the requests, by key
     * @param state the requestState the agent sends back with its answers
     */
    record Asked(ObjectNode inputRequests, String state) implements Step {
    }

    /** One call, what its server asked and the answer it waits for. */
    private final class Round implements ToolCatalog.Agent {
        final String capabilities;
        final String given;
        final BlockingQueue<Object> steps = new LinkedBlockingQueue<>();
        volatile CompletableFuture<JsonNode> waiting;

        Round(String capabilities, String given) {
            this.capabilities = capabilities;
            this.given = given;
        }

        @Override
        public String givenAnswers() {
            return given;
        }

        @Override
        public String ask(String method, String params) {
            String key = "execache-input-" + keys.incrementAndGet();
            ObjectNode requests = Json.MAPPER.createObjectNode();
            ObjectNode request = requests.putObject(key);
            request.put("method", method);
            request.set("params", RelayedRequests.params(method, params));
            JsonNode given = await(requests, UUID.randomUUID().toString()).get(key);
            if (given == null || !given.isObject()) {
                throw new AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "the agent's retry did not"
                        + " answer the request " + key);
            }
            return Json.write(given);
        }

        @Override
        public String capabilities() {
            return capabilities;
        }

        @Override
        public boolean asksRounds() {
            return true;
        }

        @Override
        public String askRound(String inputRequests, String requestState) {
            JsonNode requests = RelayedRequests.params("inputRequests", inputRequests);
            if (!(requests instanceof ObjectNode asked)) {
                throw new AgentRefusedException(McpSchema.ErrorCodes.INVALID_PARAMS, "the server's inputRequests is"
                        + " not an object");
            }
            // a server that keeps its state itself gives none; the agent's retry names the call by one of execache's
            return Json.write(await(asked, requestState != null ? requestState : UUID.randomUUID().toString()));
        }

        /** Gives the agent the requests, and waits for its answers. */
        private JsonNode await(ObjectNode requests, String state) {
            CompletableFuture<JsonNode> answer = new CompletableFuture<>();
            waiting = answer;
            rounds.put(state, this);
            try {
                steps.add(new Asked(requests, state));
                return answer.get();
            } catch (InterruptedException e) {
                // kept, so that the call stops too (a url server's request is ended by it)
                Thread.currentThread().interrupt();
                throw new AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "the call ended before the agent"
                        + " answered");
            } catch (ExecutionException e) {
                throw e.getCause() instanceof AgentRefusedException refused ? refused
                        : new AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, e.getCause().getMessage());
            } finally {
                rounds.remove(state, this);
            }
        }
    }

    /**
     * Starts {@code call} (given the agent its server may ask) on a thread of its own; returns what it did first.
     *
     * @param capabilities the client capabilities the agent declared, as JSON text; null when it declared none
     * @param given the {@code inputResponses} and {@code requestState} the agent's request carried, as JSON text;
     *     null for none
     */
    Step start(String capabilities, String given, Function<ToolCatalog.Agent, CallToolResult> call)
            throws InterruptedException {
        Round round = new Round(capabilities, given);
        CALLS.execute(() -> {
            try {
                round.steps.add(new Done(call.apply(round)));
            } catch (RuntimeException | Error e) {
                round.steps.add(e);
            }
        });
        return next(round);
    }

    /**
     * Gives the agent's answers ({@code inputResponses}, as the agent gave them) to the call named by {@code state};
     * returns what the call did next, or null when no call of this process waits with that state (it ended, or began
     * at another instance of a fleet).
     */
    Step resume(String state, JsonNode inputResponses) throws InterruptedException {
        Round round = rounds.remove(state);
        if (round == null) {
            return null;
        }
        round.waiting.complete(inputResponses != null && inputResponses.isObject() ? inputResponses
                : Json.MAPPER.createObjectNode());
        return next(round);
    }

    private Step next(Round round) throws InterruptedException {
        Object step = round.steps.take();
        if (step instanceof Asked asked) {
            return asked;
        }
        if (step instanceof RuntimeException e) {
            throw e;
        }
        if (step instanceof Error e) {
            throw e;
        }
        return (Done) step;
    }
}
