package dev.execache.core.spi;

import dev.execache.core.ToolResult;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Tools discovered somewhere else (the agent's other MCP servers): what each one is, its
 * version (a digest of its definition), and a way to call it. It feeds a
 * {@link ToolVersionSource}: a tool whose digest changed has changed.
 */
public interface ToolCatalog extends AutoCloseable {

    /** Every tool discovered so far, in a stable order. */
    List<CatalogTool> tools();

    /**
     * Calls a discovered tool by its catalog name. Never throws for what the tool or its server
     * does: a failure, a dead server or a timeout is an error result. When the calling thread is
     * interrupted, the call is cancelled (on the server too, if it was sent) and this throws a
     * {@link ToolCallCancelledException}.
     */
    ToolResult call(String tool, Map<String, Object> args);

    /**
     * As {@link #call(String, Map)}, for a caller that wants the server's progress: each progress notification the
     * server sends for this call goes to {@code progress} as its params ({@code progress}, {@code total},
     * {@code message}), without the server's token. By default no progress is reported.
     */
    default ToolResult call(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress) {
        return call(tool, args);
    }

    /**
     * Each server's identity: a one-way digest of how it is reached (its command, arguments,
     * environment, working directory), keyed with the fleet's key where there is one. Answers of
     * servers with different identities are never taken for each other; a server whose answers do
     * not depend on who asks has none. Its tools' versions include it.
     */
    default Map<String, String> identities() {
        return Map.of();
    }

    /** What each server that gave instructions when it connected says of itself, by server name. */
    default Map<String, String> instructions() {
        return Map.of();
    }

    /**
     * Which of {@code resources}, {@code prompts} and {@code completions} each connected server declared when it
     * connected, by server name, in the servers' order. By default no server offers any.
     */
    default Map<String, java.util.Set<String>> features() {
        return Map.of();
    }

    /**
     * Asks one server a request other than a tool call ({@code resources/list}, {@code resources/templates/list},
     * {@code resources/read}, {@code prompts/list}, {@code prompts/get}, {@code completion/complete}) and gives its
     * result as the server wrote it.
     *
     * @param params the request's params as JSON text (an object)
     * @return the result as JSON text (an object)
     * @throws ServerRefusedException when the server answered with an error, or cannot be asked
     */
    default String ask(String server, String method, String params) {
        throw new ServerRefusedException(-32601, "server " + server + " cannot be asked " + method);
    }

    /** Asks to be told when the discovered tools change (added, removed, or a new digest). */
    void addListener(Listener listener);

    /**
     * Asks every server that logs to send its log messages from {@code level} up (as MCP names the levels:
     * {@code debug}, {@code info}, {@code notice}, {@code warning}, {@code error}, {@code critical}, {@code alert},
     * {@code emergency}); a server that connects later is asked when it does. By default there are none to ask.
     */
    default void setLogLevel(String level) {
    }

    /** Asks to be told the servers' log messages. By default no server logs. */
    default void addLogListener(LogListener listener) {
    }

    @Override
    void close();

    @FunctionalInterface
    interface Listener {
        /** @param tools every tool discovered now */
        void toolsChanged(List<CatalogTool> tools);
    }

    @FunctionalInterface
    interface LogListener {
        /**
         * One log message of one server.
         *
         * @param server the name of the server that sent it
         * @param message the message's params as the server sent them ({@code level}, {@code logger}, {@code data}
         *     of any JSON shape), as JSON-like values
         */
        void logged(String server, Map<String, Object> message);
    }
}
