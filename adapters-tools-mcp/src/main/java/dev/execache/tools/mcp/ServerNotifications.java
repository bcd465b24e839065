package dev.execache.tools.mcp;

import io.modelcontextprotocol.spec.McpSchema;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Where a server's notifications go, however the server is reached: its log messages, the progress of the calls sent
 * with a progress token, and those the agent hears as they were sent ({@link #PASSED_ON}). One for a command server's
 * pipe and a url server's streams, so that both pass on the same.
 */
final class ServerNotifications {
    /** The server's notifications the agent hears as they were sent. */
    static final Set<String> PASSED_ON = Set.of(McpSchema.METHOD_NOTIFICATION_RESOURCES_UPDATED,
            McpSchema.METHOD_NOTIFICATION_RESOURCES_LIST_CHANGED, McpSchema.METHOD_NOTIFICATION_PROMPTS_LIST_CHANGED,
            McpSchema.METHOD_NOTIFICATION_ELICITATION_COMPLETE);

    private final Consumer<Map<String, Object>> logged;
    private final BiConsumer<String, Map<String, Object>> notified;
    /** Where the progress of a call goes, by the progress token it was sent with. */
    private final Map<Object, Consumer<Map<String, Object>>> progress = new ConcurrentHashMap<>();

    /**
     * @param logged gets the params of each {@code notifications/message} the server sends, as it sent them
     * @param notified gets each notification of {@link #PASSED_ON} (method, params as sent)
     */
    ServerNotifications(Consumer<Map<String, Object>> logged, BiConsumer<String, Map<String, Object>> notified) {
        this.logged = logged;
        this.notified = notified;
    }

    /** Passes a notification of the server's on; returns false for one that is not passed on here. */
    boolean take(String method, Map<?, ?> params) {
        if (McpSchema.METHOD_NOTIFICATION_MESSAGE.equals(method) && params != null) {
            // the params as sent: MCP lets a server log any JSON, which must reach the agent unchanged
            logged.accept(copy(params));
            return true;
        }
        if (McpSchema.METHOD_NOTIFICATION_PROGRESS.equals(method) && params != null
                && params.get("progressToken") != null && progress.containsKey(params.get("progressToken"))) {
            Map<String, Object> step = copy(params);
            step.remove("progressToken");
            progress.get(params.get("progressToken")).accept(step);
            return true;
        }
        if (PASSED_ON.contains(method)) {
            notified.accept(method, params == null ? Map.of() : copy(params));
            return true;
        }
        return false;
    }

    /**
     * The server said its tools changed ({@code notifications/tools/list_changed}): the agent is told so whatever its
     * list shows when it is asked again, as it would be directly (tools it does not list may have changed too).
     */
    void toolsChanged() {
        notified.accept(McpSchema.METHOD_NOTIFICATION_TOOLS_LIST_CHANGED, Map.of());
    }

    /** Sends the progress notifications of the call sent with {@code token} to {@code sink} until it is forgotten. */
    void onProgress(String token, Consumer<Map<String, Object>> sink) {
        progress.put(token, sink);
    }

    void forgetProgress(String token) {
        progress.remove(token);
    }

    private static Map<String, Object> copy(Map<?, ?> params) {
        Map<String, Object> copy = new LinkedHashMap<>();
        params.forEach((key, value) -> copy.put(String.valueOf(key), value));
        return copy;
    }
}
