package dev.execache.gateway;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.ToolCatalog;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * What an agent hears of one {@code execute_code} call while its code runs: under the call's progress token, that it
 * is still running (every second) and the progress the servers of the code's tool calls report; and, for those
 * servers, the agent they may ask something. One token carries it all, and the spec wants its {@code progress} to
 * grow with each notification, which several calls each counting from 1 would not: so {@code progress} counts the
 * notifications sent for the call (1, 2, 3, ...), no {@code total} is given, and the {@code message} says what each is
 * ({@code running for 3 s}; {@code SERVER__TOOL: } and the server's message, else its own progress and total).
 * Nothing is sent once the call is answered.
 */
final class RunProgress implements CodeTools.Caller {
    private final Object token;
    private final BiConsumer<String, ObjectNode> notifications;
    private final ToolCatalog.Agent agent;
    private final ToolCatalog.Person person;
    /** Notifications sent so far; guarded by this, which also keeps them in the order of their numbers. */
    private long sent;
    private boolean answered;

    /**
     * @param token the call's progress token; null: the agent asked for no progress
     * @param agent the agent that made the call, which the servers may ask something; null: none can be asked
     * @param person the person the call is made for; null: none
     */
    RunProgress(Object token, BiConsumer<String, ObjectNode> notifications, ToolCatalog.Agent agent,
            ToolCatalog.Person person) {
        this.token = token;
        this.notifications = notifications;
        this.agent = agent;
        this.person = person;
    }

    @Override
    public ToolCatalog.Agent agent() {
        return agent;
    }

    @Override
    public ToolCatalog.Person person() {
        return person;
    }

    /** The run has gone on for {@code seconds}. */
    void running(long seconds) {
        send("running for " + seconds + " s");
    }

    @Override
    public void progress(String tool, Map<String, Object> step) {
        Object message = step.get("message");
        Object total = step.get("total");
        send(tool + ": " + (message instanceof String text && !text.isBlank() ? text
                : step.get("progress") + (total == null ? "" : "/" + total)));
    }

    /** The call is answered (or ended): what comes later is not sent. */
    synchronized void answered() {
        answered = true;
    }

    private synchronized void send(String message) {
        if (token == null || answered) {
            return;
        }
        sent++;
        ObjectNode params = Json.MAPPER.createObjectNode();
        params.set("progressToken", Json.MAPPER.valueToTree(token));
        params.put("progress", sent);
        params.put("message", message);
        notifications.accept("notifications/progress", params);
    }
}
