package dev.execache.core.spi;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The tools code may call, as the host offers them (the downstream servers' tools behind the
 * tool cache). {@link CachedExecutor} routes every call of a run through it, records what the
 * run called, and decides from that whether the run may be stored.
 */
public interface CodeTools {
    CodeTools NONE = new CodeTools() {
        @Override
        public Map<String, List<String>> reachable() {
            return Map.of();
        }

        @Override
        public Set<String> names() {
            return Set.of();
        }

        @Override
        public CodeToolCall call(String server, String tool, String argumentsJson) {
            return CodeToolCall.refused(server, tool, "no tools are reachable from code");
        }
    };

    /** Each server's name and the names (its own) of its tools that code may call. */
    Map<String, List<String>> reachable();

    /**
     * The names ({@code SERVER__TOOL}) of every tool this offers, reachable or not. A run depends
     * on those it called, not on all of them.
     */
    Set<String> names();

    /**
     * The identity of each server code may reach (see {@link ToolCatalog#identities()}): a run of
     * code that may call tools is keyed on them, so that runs made through differently configured
     * servers are never taken for each other.
     */
    default Map<String, String> identities() {
        return Map.of();
    }

    /** Calls a tool through the tool cache; never throws for what the tool does. */
    CodeToolCall call(String server, String tool, String argumentsJson);

    /**
     * As {@link #call(String, String, String)}, counted for {@code agent}, the agent whose run makes
     * the call (null: counted in total only); tools that count nothing per agent need not override it.
     */
    default CodeToolCall call(String server, String tool, String argumentsJson, String agent) {
        return call(server, tool, argumentsJson);
    }
}
