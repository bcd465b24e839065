package dev.execache.core.spi;

import dev.execache.core.ToolResult;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
     * As {@link #call(String, Map, Consumer)} ({@code progress} may be null), for a call made by an agent that the
     * server may ask something while it answers ({@code sampling/createMessage}, {@code elicitation/create},
     * {@code roots/list}): such a request goes to {@code agent} and its answer back to the server. By default servers
     * ask nothing.
     */
    default ToolResult call(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress, Agent agent) {
        return progress == null ? call(tool, args) : call(tool, args, progress);
    }

    /**
     * Whether {@code tool} (a catalog name, {@code SERVER__TOOL}) names a tool its server did not list: the server is
     * configured and up, and its last list neither offered the tool nor named it (a tool the catalog left out of a
     * list, for a declaration it cannot honour, is not one). Directly, a client may call a tool a server does not
     * list; a caller may pass such a call on, knowing nothing of what the tool does. By default no tool is one.
     */
    default boolean unlisted(String tool) {
        return false;
    }

    /**
     * As {@link #call(String, Map, Consumer, Agent)} ({@code agent} may be null), made for {@code person}: a server
     * reached as each caller's person ({@link #perPerson()}) is reached as them. Null: for nobody in particular (such
     * a server then refuses the call, saying why). By default the person is not needed.
     */
    default ToolResult call(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress, Agent agent,
            Person person) {
        return call(tool, args, progress, agent);
    }

    /**
     * The servers whose answers are each calling person's own: reached as that person (their token exchanged for one
     * meant for the server) and not shared publicly, so a cache keys their answers on the person. By default none.
     */
    default java.util.Set<String> perPerson() {
        return java.util.Set.of();
    }

    /**
     * The person a call is made for, as the transport authenticated them: their subject at the identity provider and
     * the access token they presented, which a server reached as them gets exchanged for one meant for it. The token
     * is never stored, logged nor shown.
     *
     * @param subject who the token names ({@code sub}, else its client), never blank
     * @param token the access token as presented
     */
    record Person(String subject, String token) {
        public Person {
            if (subject == null || subject.isBlank()) {
                throw new IllegalArgumentException("subject must not be blank");
            }
            java.util.Objects.requireNonNull(token, "token must not be null");
        }

        /** Names the subject, never the token. */
        @Override
        public String toString() {
            return "Person[subject=" + subject + "]";
        }
    }

    /**
     * The agent a server's request made outside any call goes to (a server that asks {@code roots/list} once it is
     * connected); null: none (every such request is refused, saying so). By default servers ask nothing.
     */
    default void setSessionAgent(Agent agent) {
    }

    /** The agent's roots changed ({@code notifications/roots/list_changed}): every server is told. */
    default void rootsChanged() {
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

    /**
     * How each server stands now, in a stable order: a catalog that starts its servers in the
     * background offers their tools as each one comes up, so a person needs to see which are
     * still starting and why one is unavailable.
     */
    default List<ServerStatus> servers() {
        return List.of();
    }

    /**
     * Waits while the named server is starting (its first start, or a start after it ended), at
     * most as long as its start may take; returns at once when it is up, unavailable or unknown.
     * For a call that names a tool of a server that has not offered its tools yet.
     */
    default void awaitStart(String server) throws InterruptedException {
    }

    /**
     * Waits while the named server is starting and has not yet said who it is (its answer to {@code initialize}, with
     * its {@link #instructions}), at most as long as its start may take: an agent's {@code initialize} needs those
     * instructions, not the server's tools. By default, as {@link #awaitStart}.
     */
    default void awaitIntroduction(String server) throws InterruptedException {
        awaitStart(server);
    }

    /**
     * For a call that names a tool of a server waiting for a person's sign-in: asks {@code agent} to
     * have its person sign in (a URL-mode elicitation), waits for the sign-in and for the server to
     * come up with it. Returns whether it is up now; false at once for a server that waits for no
     * sign-in, or an agent that cannot be asked.
     */
    default boolean signIn(String server, Agent agent) throws InterruptedException {
        return false;
    }

    /**
     * What each server that gave instructions when it connected says of itself, by server name: also a server still
     * starting that has said it (see {@link #awaitIntroduction}).
     */
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

    /**
     * As {@link #ask(String, String, String)}, for a request made by an agent that the server may ask something while
     * it answers (sampling, elicitation, roots), as in {@link #call(String, Map, Consumer, Agent)}; null: nobody can
     * be asked. An agent that takes rounds ({@link Agent#asksRounds}) is not asked here: a 2026-07-28 server's
     * {@code input_required} answer comes back as it is, for that agent to answer. By default servers ask nothing.
     */
    default String ask(String server, String method, String params, Agent agent) {
        return ask(server, method, params);
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

    /**
     * Asks to be told the servers' notifications the agent hears as they were sent ({@code notifications/resources/updated},
     * {@code notifications/resources/list_changed}, {@code notifications/prompts/list_changed},
     * {@code notifications/elicitation/complete}), and each server's {@code notifications/tools/list_changed} (its
     * tools are listed again too, and the catalog's {@link Listener}s told if they changed). By default servers send
     * none.
     */
    default void addNotificationListener(NotificationListener listener) {
    }

    /** Asks to be told the servers' log messages. By default no server logs. */
    default void addLogListener(LogListener listener) {
    }

    @Override
    void close();

    /**
     * One server as the catalog knows it.
     *
     * @param reason why it is unavailable, in one line (the command and the operating system's
     *     error, say); null unless {@code state} is {@link State#UNAVAILABLE}
     * @param tools how many tools it offers now
     */
    record ServerStatus(String name, State state, String reason, int tools) {
        public ServerStatus {
            Objects.requireNonNull(name, "name must not be null");
            Objects.requireNonNull(state, "state must not be null");
            if ((state == State.UNAVAILABLE) != (reason != null)) {
                throw new IllegalArgumentException("server " + name + ": reason must be given exactly when it is unavailable");
            }
        }

        public enum State {
            /** Being started, and not yet up or failed. */
            STARTING,
            /** Up: its tools are offered. */
            UP,
            /** Its last start failed (or it cannot be reached); it is tried again with backoff. */
            UNAVAILABLE
        }
    }

    /**
     * The agent a request came from, as a server behind execache may ask it: sampling, elicitation, roots. It answers
     * on the thread that asks, and may take as long as the person behind the agent does.
     */
    @FunctionalInterface
    interface Agent {
        /**
         * @param method the server's request ({@code sampling/createMessage}, {@code elicitation/create},
         *     {@code roots/list})
         * @param params its params as JSON text (an object)
         * @return the agent's result as JSON text (an object)
         * @throws AgentRefusedException when the agent answered with an error, did not declare the capability, or
         *     cannot be asked
         */
        String ask(String method, String params);

        /**
         * The client capabilities the agent declared, as JSON text (an object): what execache declares in its stead
         * to a server of the 2026-07-28 era, so that the server asks only what the agent can answer; null when not
         * known (execache's own are declared).
         */
        default String capabilities() {
            return null;
        }

        /**
         * Whether the agent takes a 2026-07-28 server's requests a round at a time, as the server made them
         * ({@link #askRound}); else each request is asked with {@link #ask}.
         */
        default boolean asksRounds() {
            return false;
        }

        /**
         * What the agent's request carried for a 2026-07-28 server from the start, as JSON text (an object with its
         * {@code inputResponses} and {@code requestState}, as the agent gave them): answers given before they were
         * asked (a server that keeps no state takes them so), or the retry of a round this process does not keep;
         * null for none.
         */
        default String givenAnswers() {
            return null;
        }

        /**
         * Asks the agent every request of one round of a 2026-07-28 server at once, with the server's keys and
         * {@code requestState}.
         *
         * @param inputRequests the server's {@code inputRequests} as JSON text (an object of keys to requests)
         * @param requestState the server's {@code requestState}; null when it gave none
         * @return the agent's {@code inputResponses} as JSON text (an object), for the server as they are
         * @throws AgentRefusedException when the agent cannot be asked
         */
        default String askRound(String inputRequests, String requestState) {
            throw new AgentRefusedException(-32601, "this agent is asked one request at a time");
        }

        /**
         * Whether the agent may be asked to have its person sign in to a server again when the server refuses a call
         * for the sign-in's sake (it expired, or the server wants more scope): an agent that is one person's own
         * (on stdio), never one of the many that share a serve over HTTP.
         */
        default boolean signsIn() {
            return false;
        }
    }

    /** An agent that passes everything to another: a wrapper overrides only what it changes or watches. */
    class ForwardingAgent implements Agent {
        private final Agent to;

        public ForwardingAgent(Agent to) {
            this.to = to;
        }

        @Override
        public String ask(String method, String params) {
            return to.ask(method, params);
        }

        @Override
        public String capabilities() {
            return to.capabilities();
        }

        @Override
        public boolean asksRounds() {
            return to.asksRounds();
        }

        @Override
        public String givenAnswers() {
            return to.givenAnswers();
        }

        @Override
        public String askRound(String inputRequests, String requestState) {
            return to.askRound(inputRequests, requestState);
        }

        @Override
        public boolean signsIn() {
            return to.signsIn();
        }
    }

    @FunctionalInterface
    interface Listener {
        /** @param tools every tool discovered now */
        void toolsChanged(List<CatalogTool> tools);
    }

    @FunctionalInterface
    interface NotificationListener {
        /**
         * @param server the name of the server that sent it
         * @param params its params as the server sent them (JSON-like values; empty when it sent none)
         */
        void notified(String server, String method, Map<String, Object> params);
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
