package dev.execache.mcp.server.protocol;

import dev.execache.gateway.Json;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.spi.AgentRefusedException;
import dev.execache.core.spi.ToolCatalog;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.IOException;
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
 * (sampling, elicitation, roots), the answer to the agent's request is {@code input_required} with that request and
 * a {@code requestState} naming the call; the agent's retry (the same request with {@code inputResponses} and that
 * {@code requestState}) hands the answers to the waiting server and goes on waiting for the call. The call is kept in
 * this process: a retry that reaches another instance of a fleet is refused, naming why.
 */
final class InputRounds {
    private static final ExecutorService CALLS = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "execache-mcp-round");
        thread.setDaemon(true);
        return thread;
    });

    private final Map<String, Round> rounds = new ConcurrentHashMap<>();
    private final AtomicLong keys = new AtomicLong();

    /** What a call did next: ended ({@link Done}), or asked the agent something ({@link Asked}). */
    sealed interface Step permits Done, Asked {
    }

    record Done(CallToolResult result) implements Step {
    }

    /** @param state the requestState the agent sends back with its answer */
    record Asked(String key, String method, JsonNode params, String state) implements Step {
    }

    /** The requestState names no call this process keeps. */
    static final class UnknownStateException extends RuntimeException {
        UnknownStateException(String message) {
            super(message);
        }
    }

    /** One call and what its server asked and is waiting for. */
    private final class Round implements ToolCatalog.Agent {
        final String state = UUID.randomUUID().toString();
        final BlockingQueue<Object> steps = new LinkedBlockingQueue<>();
        final Map<String, CompletableFuture<String>> waiting = new ConcurrentHashMap<>();

        @Override
        public String ask(String method, String params) {
            String key = "execache-input-" + keys.incrementAndGet();
            CompletableFuture<String> answer = new CompletableFuture<>();
            waiting.put(key, answer);
            try {
                steps.add(new Asked(key, method, RelayedRequests.params(method, params), state));
                return answer.get();
            } catch (InterruptedException e) {
                // kept, so that the call stops too (a url server's request is ended by it)
                Thread.currentThread().interrupt();
                throw new AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "the call ended before the agent"
                        + " answered " + method);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof AgentRefusedException refused ? refused
                        : new AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, e.getCause().getMessage());
            } finally {
                waiting.remove(key);
            }
        }
    }

    /** Starts {@code call} (given the agent its server may ask) on a thread of its own; returns what it did first. */
    Step start(Function<ToolCatalog.Agent, CallToolResult> call) throws InterruptedException {
        Round round = new Round();
        rounds.put(round.state, round);
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
     * Gives the agent's answers ({@code inputResponses}, each the bare result for its key) to the requests the call
     * named by {@code state} is waiting for; a request it did not answer is refused to the server. Returns what the call
     * did next.
     *
     * @throws UnknownStateException when no call of this process has that state (it ended, or began elsewhere)
     */
    Step resume(String state, JsonNode inputResponses) throws InterruptedException {
        Round round = rounds.get(state);
        if (round == null) {
            throw new UnknownStateException("Invalid params: params.requestState names no call in progress here (it"
                    + " ended, or it was begun by another execache instance)");
        }
        round.waiting.forEach((key, answer) -> {
            JsonNode given = inputResponses == null ? null : inputResponses.get(key);
            if (given != null && given.isObject()) {
                answer.complete(Json.write(given));
            } else {
                answer.completeExceptionally(new AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR,
                        "the agent's retry did not answer the request " + key));
            }
        });
        return next(round);
    }

    private Step next(Round round) throws InterruptedException {
        Object step = round.steps.take();
        if (step instanceof Asked asked) {
            return asked;
        }
        rounds.remove(round.state);
        if (step instanceof RuntimeException e) {
            throw e;
        }
        if (step instanceof Error e) {
            throw e;
        }
        return (Done) step;
    }
}
