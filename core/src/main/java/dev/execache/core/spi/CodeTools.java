package dev.execache.core.spi;

import dev.execache.core.Freshness;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The tools code may call: as the host offers them (the downstream servers' tools behind the
 * tool cache), and as a {@link Sandbox} receives them for one run. {@link dev.execache.core.CachedExecutor} hands
 * each run its own, which routes every call to the host's under the run's limits and records
 * what the run called, so the sandbox knows nothing of caching or of where the tools come from.
 */
public interface CodeTools {
    CodeTools NONE = unreachable(Map.of(), "no tools are reachable from code");

    /**
     * No tool code can reach, every call refused saying {@code why}; runs keyed on {@code identities} all the same
     * (the servers a run's key names without any being started).
     */
    static CodeTools unreachable(Map<String, String> identities, String why) {
        Map<String, String> kept = Map.copyOf(identities);
        return new CodeTools() {
            @Override
            public Map<String, List<String>> reachable() {
                return Map.of();
            }

            @Override
            public Map<String, String> identities() {
                return kept;
            }

            @Override
            public CodeToolCall call(String server, String tool, String argumentsJson, String agent,
                    Freshness freshness) {
                return CodeToolCall.refused(server, tool, why);
            }
        };
    }

    /** Each server's name and the names (its own) of its tools that code may call. */
    Map<String, List<String>> reachable();

    /**
     * The names ({@code SERVER__TOOL}) of every tool this offers, reachable or not (by default, those reachable). A run depends
     * on those it called, not on all of them.
     */
    default Set<String> names() {
        Set<String> names = new TreeSet<>();
        reachable().forEach((server, tools) -> tools.forEach(tool -> names.add(server + "__" + tool)));
        return names;
    }

    /**
     * Whether {@code name}, among the tool versions, is one of this' beyond {@link #names()}: a tool withdrawn or
     * not offered yet, or a server's read. A run's key leaves this' versions out (it depends on the tools it
     * called), so that it does not change while a server comes up or is read. By default, none.
     */
    default boolean owns(String name) {
        return false;
    }

    /**
     * The identity of each server code may reach (see {@link ToolCatalog#identities()}): a run of
     * code that may call tools is keyed on them, so that runs made through differently configured
     * servers are never taken for each other.
     */
    default Map<String, String> identities() {
        return Map.of();
    }

    /**
     * Calls a tool through the tool cache and waits for its answer, counted for {@code agent} and
     * asked as fresh as {@code freshness} says. Never throws for what the tool does: a failure is an
     * error answer. When the run ends while the call is in flight, the sandbox interrupts the thread
     * that made it: the call then gives up at once, cancels what it asked for, and throws a
     * {@link java.util.concurrent.CancellationException} (a {@link ToolCallCancelledException} when it
     * knows whether the tool was reached).
     *
     * <p>The tools {@link dev.execache.core.CachedExecutor} hands a run count every call for the run's
     * agent, at the run's freshness, whatever the sandbox passes: a sandbox knows neither.
     *
     * @param argumentsJson the arguments as the code gave them, as JSON text
     * @param agent who asked (see {@link dev.execache.core.Agents}); null: counted in total only
     * @param freshness how fresh an answer the caller accepts ({@link Freshness#ANY}: any the cache holds)
     */
    CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness);

    /**
     * As {@link #call(String, String, String, String, Freshness)}, for a run whose caller hears what the tool's server
     * sends it during the call: its progress, and its requests to the agent. By default the caller hears nothing.
     */
    default CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness,
            Caller caller) {
        return call(server, tool, argumentsJson, agent, freshness);
    }

    /** As {@link #call(String, String, String, String, Freshness)} for no agent, any freshness: a sandbox's call. */
    default CodeToolCall call(String server, String tool, String argumentsJson) {
        return call(server, tool, argumentsJson, null, Freshness.ANY);
    }

    /**
     * As {@link #call(String, String, String)}, told how many of the run's earlier calls the code
     * could have read the answers of when it made this one (its arguments depend on no later
     * answer). A run's trace keeps it, so that calls made independently of each other's answers are
     * asked again at once when the run is revalidated. A sandbox that cannot tell calls
     * {@link #call(String, String, String)}, which counts every earlier call as read.
     */
    default CodeToolCall callAfter(String server, String tool, String argumentsJson, int answersSeen) {
        return call(server, tool, argumentsJson);
    }

    /**
     * Who asked for a run, as the run's tool calls reach them while they are in flight (serve's {@code execute_code}):
     * the progress the tools' servers report, and the agent a server may ask something (sampling, elicitation,
     * roots). {@link #NONE} (the command line, a library caller): the progress goes nowhere and a server's request is
     * refused, saying so. Called on the threads that make the run's calls, possibly several at once.
     */
    interface Caller {
        Caller NONE = new Caller() {
        };

        /**
         * One progress notification a tool's server sent during a call the run made: {@code step} is its params
         * ({@code progress}, {@code total}, {@code message}) without the server's token.
         *
         * @param tool the tool called ({@code SERVER__TOOL})
         */
        default void progress(String tool, Map<String, Object> step) {
        }

        /** The agent the tools' servers may ask something during the run's calls; null: none. */
        default ToolCatalog.Agent agent() {
            return null;
        }

        /** The person the run is made for, whom a server reached as each caller's person is reached as; null: none. */
        default ToolCatalog.Person person() {
            return null;
        }
    }
}
