package dev.execache.gateway;

import dev.execache.core.ToolResult;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.ServerRefusedException;
import dev.execache.core.spi.ToolCatalog;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The servers behind the gateway as a test scripts them: the tools they offer, how they stand, what they answer
 * to a request that is not a tool call ({@link #answers}), and the notifications and log messages they send when
 * the test says so. It records what it was asked.
 */
public class ScriptedCatalog implements ToolCatalog {
    /** A server's answer (JSON text) to a request other than a tool call. */
    @FunctionalInterface
    interface Answers {
        String answer(String server, String method, String params);
    }

    public volatile List<CatalogTool> tools = List.of();
    public volatile List<ServerStatus> servers = List.of();
    public volatile Map<String, String> identities = Map.of();
    /** Which of resources, prompts and completions each server offers, in the servers' order. */
    public volatile Map<String, Set<String>> features = Map.of();
    public volatile Answers answers = (server, method, params) -> {
        throw new ServerRefusedException(-32601, "server " + server + " cannot be asked " + method);
    };
    /** Each request other than a tool call, as "SERVER METHOD PARAMS". */
    public final List<String> asked = new CopyOnWriteArrayList<>();
    /** The servers whose start was waited for, in order. */
    public final List<String> awaited = new CopyOnWriteArrayList<>();
    /** The log levels the servers were asked for, in order. */
    public final List<String> levels = new CopyOnWriteArrayList<>();
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    private final List<NotificationListener> notificationListeners = new CopyOnWriteArrayList<>();
    private final List<LogListener> logListeners = new CopyOnWriteArrayList<>();

    /** A tool of {@code server} as a catalog offers it: {@code SERVER__TOOL}, read-only as its server says. */
    public static CatalogTool tool(String server, String name, Map<String, Object> moreFields) {
        Map<String, Object> definition = new java.util.LinkedHashMap<>(Map.of("name", name,
                "inputSchema", Map.of("type", "object")));
        definition.putAll(moreFields);
        return new CatalogTool(server + "__" + name, server, "v-" + name, definition, true, true);
    }

    /** The servers now offer {@code offered}: every listener is told. */
    public void offer(List<CatalogTool> offered) {
        tools = List.copyOf(offered);
        listeners.forEach(listener -> listener.toolsChanged(tools));
    }

    /** {@code server} sends a notification the agent hears as it was sent. */
    public void notify(String server, String method, Map<String, Object> params) {
        notificationListeners.forEach(listener -> listener.notified(server, method, params));
    }

    /** {@code server} sends a log message. */
    public void log(String server, Map<String, Object> message) {
        logListeners.forEach(listener -> listener.logged(server, message));
    }

    @Override
    public List<CatalogTool> tools() {
        return tools;
    }

    @Override
    public ToolResult call(String tool, Map<String, Object> args) {
        return ToolResult.ok("{\"content\":[{\"type\":\"text\",\"text\":\"" + tool + "\"}]}");
    }

    @Override
    public String ask(String server, String method, String params) {
        asked.add(server + " " + method + " " + params);
        return answers.answer(server, method, params);
    }

    @Override
    public Map<String, String> identities() {
        return identities;
    }

    @Override
    public Map<String, Set<String>> features() {
        return features;
    }

    @Override
    public List<ServerStatus> servers() {
        return new ArrayList<>(servers);
    }

    @Override
    public void awaitStart(String server) {
        awaited.add(server);
    }

    @Override
    public void setLogLevel(String level) {
        levels.add(level);
    }

    @Override
    public void addListener(Listener listener) {
        listeners.add(listener);
    }

    @Override
    public void addNotificationListener(NotificationListener listener) {
        notificationListeners.add(listener);
    }

    @Override
    public void addLogListener(LogListener listener) {
        logListeners.add(listener);
    }

    @Override
    public void close() {
    }
}
