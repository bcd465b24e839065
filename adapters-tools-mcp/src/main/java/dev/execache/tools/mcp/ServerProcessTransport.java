package dev.execache.tools.mcp;

import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCRequest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The client side of MCP over stdio to a server process execache starts. It replaces the
 * SDK's {@code StdioClientTransport} (2.1.0) for three things that one cannot do: run the
 * command in a working directory ({@code cwd}), learn that the process ended so the server is
 * restarted and calls in flight fail at once instead of at their timeout
 * (modelcontextprotocol/java-sdk #959), and end a process that ignores SIGTERM, with its
 * children (java-sdk #937). Delete it when the SDK's transport does these. It starts the process
 * before the client connects (see {@link #start}), through {@link ServerProcesses}, so that the
 * server ends with execache even when it never answered. It also cancels a
 * tools/call it sent (see {@link #cancel}), which the SDK's client (2.1.0) cannot: that part has
 * to move wherever the request ids are known.
 */
final class ServerProcessTransport implements McpClientTransport {
    private static final System.Logger LOG = System.getLogger("dev.execache.tools.mcp");
    private static final long STOP_WAIT_MILLIS = 2_000;
    /**
     * execache's own secrets, which a server it starts (someone else's program) does not inherit:
     * the fleet's signing keys would let it plant results in the shared store, and the Redis URL
     * may hold its password. A server's own {@code env} may still set them.
     */
    static final Set<String> WITHHELD =
            Set.of("EXECACHE_SIGNING_KEY", "EXECACHE_SIGNING_KEY_OLD", "EXECACHE_REDIS_URL");

    private static final Pattern SYSTEM_ERROR = Pattern.compile("error=\\d+, (.+)$");
    /** The server's requests to the agent, taken off the pipe and relayed (see {@link Asked}). */
    static final Set<String> ASKED = Set.of(McpSchema.METHOD_SAMPLING_CREATE_MESSAGE, McpSchema.METHOD_ELICITATION_CREATE,
            McpSchema.METHOD_ROOTS_LIST);
    /**
     * What execache declares to the server in initialize, so that it offers what it offers a client that can be asked:
     * the server starts before any agent connects and is shared by every agent, so the capabilities are declared
     * whole, and a request the agent cannot answer is refused when it comes (see {@link Asked}). A url server is
     * declared the same ({@link StreamableHttpClient}).
     */
    static final Map<String, Object> CLIENT_CAPABILITIES = Map.of(
            "sampling", Map.of(),
            "elicitation", Map.of("form", Map.of(), "url", Map.of()),
            "roots", Map.of("listChanged", true));
    /** The server's requests to the agent wait here, for as long as the agent takes, off the reading thread. */
    private static final java.util.concurrent.ExecutorService ASKING = java.util.concurrent.Executors.newCachedThreadPool(
            runnable -> {
                Thread thread = new Thread(runnable, "execache-mcp-asked");
                thread.setDaemon(true);
                return thread;
            });

    private final McpServerSettings settings;
    private final Consumer<String> stderr;
    private final Consumer<Integer> exited;
    private final Asked asked;
    /** The server's log messages, progress and the notifications passed on, taken off the pipe. */
    private final ServerNotifications notifications;
    /**
     * Each tool as the server's last tools/list described it, every field: the SDK's tool type drops the ones it
     * does not know ({@code execution}, say), which reach the agent unchanged from here.
     */
    private final Map<String, Map<String, Object>> listedTools = new ConcurrentHashMap<>();
    /** The capabilities as the server's initialize answer declared them, every field (the SDK's type drops tasks). */
    private volatile Map<?, ?> declared;
    /**
     * Requests sent here rather than by the SDK's client (2.1.0), which has no method for them (tasks), by id: ids of
     * their own prefix, which the client's never have, so that their answers are taken off the pipe here.
     */
    private final Map<String, CompletableFuture<McpSchema.JSONRPCResponse>> ownRequests = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLong ownIds = new java.util.concurrent.atomic.AtomicLong();
    private static final String OWN_ID_PREFIX = "execache-own-";
    private volatile Process process;
    /** The client sends initialize before the process has started; messages wait for it. */
    private final CompletableFuture<Process> started = new CompletableFuture<>();
    private volatile boolean closing;
    /** The ids of the tools/call requests sent and not yet forgotten, by their params (by identity); guarded by this. */
    private final Map<Object, Object> sentCalls = new IdentityHashMap<>();
    /** The params of requests cancelled before they were sent, by identity; guarded by this. */
    private final Set<Object> cancelledBeforeSent = Collections.newSetFromMap(new IdentityHashMap<>());

    /**
     * @param stderr gets each line the server writes to its stderr
     * @param exited told the exit code when the process ends without being closed
     * @param logged gets the params of each {@code notifications/message} the server sends, as it sent them
     * @param asked answers the server's requests to the agent ({@link #ASKED})
     * @param notified gets each notification of {@link ServerNotifications#PASSED_ON} (method, params as sent)
     */
    ServerProcessTransport(McpServerSettings settings, Consumer<String> stderr,
            Consumer<Integer> exited, Consumer<Map<String, Object>> logged, Asked asked,
            java.util.function.BiConsumer<String, Map<String, Object>> notified) {
        this.notifications = new ServerNotifications(logged, notified);
        this.settings = settings;
        this.stderr = stderr;
        this.exited = exited;
        this.asked = asked;
    }

    /** Answers one request of the server's to the agent. */
    @FunctionalInterface
    interface Asked {
        /**
         * @return the agent's result (JSON-like values)
         * @throws dev.execache.core.spi.AgentRefusedException with the error the server is to get
         */
        Object answer(String method, Map<String, Object> params);
    }

    /**
     * Starts the server's process (see {@link ServerProcesses}), before the SDK's client is made:
     * a command that cannot run is then the operating system's error, said once by the caller,
     * rather than a failed connect that the client logs with its stack on every try.
     */
    void start() throws IOException {
        List<String> command = new ArrayList<>();
        command.add(settings.command());
        command.addAll(settings.args());
        ProcessBuilder builder = new ProcessBuilder(command);
        if (settings.cwd() != null) {
            builder.directory(settings.cwd().toFile());
        }
        if (settings.inherited() != null) {
            builder.environment().clear();
            builder.environment().putAll(settings.inherited());
        }
        builder.environment().keySet().removeAll(WITHHELD);
        builder.environment().putAll(settings.env());
        Process launched;
        try {
            launched = ServerProcesses.start(builder);
        } catch (IOException e) {
            started.completeExceptionally(e);
            throw e;
        }
        process = launched;
        if (closing) {
            stop();
        }
        started.complete(launched);
    }

    @Override
    public Mono<Void> connect(Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler) {
        return Mono.fromRunnable(() -> {
            Process current = process;
            if (current == null) {
                throw new IllegalStateException("server " + settings.name() + " was not started");
            }
            daemon("execache-mcp-" + settings.name() + "-out", () -> readMessages(current.getInputStream(), handler));
            daemon("execache-mcp-" + settings.name() + "-err", () -> readLines(current.getErrorStream()));
            current.onExit().thenAccept(ended -> {
                if (!closing) {
                    exited.accept(ended.exitValue());
                }
            });
        });
    }

    /**
     * The operating system's reason in a failure to start a program ({@code No such file or
     * directory}), without the JDK's wording around it ({@code Cannot run program "x": error=2, });
     * the message itself when it has no such part.
     */
    static String systemError(IOException e) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        Matcher error = SYSTEM_ERROR.matcher(message);
        return error.find() ? error.group(1) : message;
    }

    private void readMessages(InputStream in, Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                JSONRPCMessage message;
                try {
                    message = McpSchema.deserializeJsonRpcMessage(McpJson.MAPPER, line);
                } catch (IOException | RuntimeException e) {
                    LOG.log(Level.WARNING, "server " + settings.name() + " sent a line that is not JSON-RPC: "
                            + abbreviate(line));
                    continue;
                }
                if (message instanceof McpSchema.JSONRPCNotification notification && notifications.take(
                        notification.method(), notification.params() instanceof Map<?, ?> params ? params : null)) {
                    // taken here, not from the SDK's consumers: its log message types data as a string, where MCP
                    // lets a server log any JSON, which must reach the agent unchanged
                    continue;
                }
                if (message instanceof JSONRPCRequest request && ASKED.contains(request.method())) {
                    // taken here: the SDK's client would answer it with handlers fixed when it was built, and its
                    // types drop what they do not know, where the agent's answer must reach the server unchanged
                    ASKING.execute(() -> answerAsked(request));
                    continue;
                }
                if (message instanceof McpSchema.JSONRPCResponse response && response.id() instanceof String id
                        && id.startsWith(OWN_ID_PREFIX)) {
                    CompletableFuture<McpSchema.JSONRPCResponse> waiting = ownRequests.remove(id);
                    if (waiting != null) {
                        waiting.complete(response);
                    }
                    continue;
                }
                if (message instanceof McpSchema.JSONRPCResponse response && response.result() instanceof Map<?, ?> result
                        && result.get("tools") instanceof List<?> listed) {
                    keepListed(listed);
                }
                if (message instanceof McpSchema.JSONRPCResponse response && response.result() instanceof Map<?, ?> result
                        && result.get("protocolVersion") instanceof String
                        && result.get("capabilities") instanceof Map<?, ?> capabilities) {
                    declared = capabilities;
                }
                handler.apply(Mono.just(message)).subscribe(ignored -> {
                }, error -> LOG.log(Level.DEBUG, "handling a message of " + settings.name() + " failed: " + error));
            }
        } catch (IOException e) {
            // the process ended; onExit reports it
        }
    }

    @SuppressWarnings("unchecked")
    private void answerAsked(JSONRPCRequest request) {
        McpSchema.JSONRPCResponse response;
        try {
            Map<String, Object> params = request.params() instanceof Map<?, ?> given ? (Map<String, Object>) given
                    : Map.of();
            response = new McpSchema.JSONRPCResponse(McpSchema.JSONRPC_VERSION, request.id(),
                    asked.answer(request.method(), params), null);
        } catch (dev.execache.core.spi.AgentRefusedException e) {
            response = new McpSchema.JSONRPCResponse(McpSchema.JSONRPC_VERSION, request.id(), null,
                    new McpSchema.JSONRPCResponse.JSONRPCError(e.code(), e.getMessage()));
        } catch (RuntimeException e) {
            response = new McpSchema.JSONRPCResponse(McpSchema.JSONRPC_VERSION, request.id(), null,
                    new McpSchema.JSONRPCResponse.JSONRPCError(McpSchema.ErrorCodes.INTERNAL_ERROR,
                            "execache could not relay " + request.method() + " to the agent: " + e.getMessage()));
        }
        Process current = process;
        if (current != null) {
            write(current, response).onErrorComplete().subscribe();
        }
    }

    @SuppressWarnings("unchecked")
    private void keepListed(List<?> listed) {
        for (Object each : listed) {
            if (each instanceof Map<?, ?> tool && tool.get("name") instanceof String name) {
                listedTools.put(name, (Map<String, Object>) tool);
            }
        }
    }

    /** The tool as the server's last tools/list described it (every field); null when it listed none of that name. */
    Map<String, Object> listedTool(String name) {
        return listedTools.get(name);
    }

    /** The capabilities the server declared in its initialize answer, every field; null before it answered. */
    Map<?, ?> declared() {
        return declared;
    }

    /**
     * Sends a request the SDK's client has no method for and waits for its answer, at most {@code timeout}.
     *
     * @return the response as the server sent it (a result or an error)
     * @throws IOException when the server is not running, does not answer in time, or the wait is interrupted
     */
    McpSchema.JSONRPCResponse request(String method, Map<String, Object> params, java.time.Duration timeout)
            throws IOException {
        Process current = process;
        if (current == null || !started.isDone()) {
            throw new IOException("server " + settings.name() + " is not running");
        }
        String id = OWN_ID_PREFIX + ownIds.incrementAndGet();
        CompletableFuture<McpSchema.JSONRPCResponse> answer = new CompletableFuture<>();
        ownRequests.put(id, answer);
        try {
            write(current, new JSONRPCRequest(McpSchema.JSONRPC_VERSION, method, id, params)).block();
            return answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(method + " to server " + settings.name() + " was cancelled");
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IOException("server " + settings.name() + " did not answer " + method + " within "
                    + timeout.toSeconds() + "s");
        } catch (java.util.concurrent.ExecutionException | RuntimeException e) {
            throw new IOException("server " + settings.name() + " could not be asked " + method + ": "
                    + (e.getCause() == null ? e.getMessage() : e.getCause().getMessage()));
        } finally {
            ownRequests.remove(id);
        }
    }

    /** Tells the server the agent's roots changed. */
    void rootsChanged() {
        Process current = process;
        if (current != null && started.isDone()) {
            write(current, new McpSchema.JSONRPCNotification(McpSchema.JSONRPC_VERSION,
                    McpSchema.METHOD_NOTIFICATION_ROOTS_LIST_CHANGED, null)).onErrorComplete().subscribe();
        }
    }

    private void readLines(InputStream in) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                stderr.accept(line);
            }
        } catch (IOException e) {
            // the process ended
        }
    }

    @Override
    public Mono<Void> sendMessage(JSONRPCMessage message) {
        return Mono.fromFuture(started.copy()).flatMap(current -> write(current, message));
    }

    private Mono<Void> write(Process current, JSONRPCMessage message) {
        if (!current.isAlive()) {
            return Mono.error(new IOException("server " + settings.name() + " is not running"));
        }
        if (message instanceof JSONRPCRequest request && McpSchema.METHOD_INITIALIZE.equals(request.method())) {
            Map<String, Object> params = new LinkedHashMap<>(McpJson.MAPPER.convertValue(request.params(),
                    new TypeRef<Map<String, Object>>() {
                    }));
            params.put("capabilities", CLIENT_CAPABILITIES);
            message = new JSONRPCRequest(request.jsonrpc(), request.method(), request.id(), params);
        }
        try {
            byte[] line = (McpJson.MAPPER.writeValueAsString(message) + "\n").getBytes(StandardCharsets.UTF_8);
            OutputStream out = current.getOutputStream();
            synchronized (this) {
                if (message instanceof JSONRPCRequest request && McpSchema.METHOD_TOOLS_CALL.equals(request.method())
                        && request.params() != null) {
                    if (cancelledBeforeSent.remove(request.params())) {
                        return Mono.error(new IOException("the call was cancelled before it was sent"));
                    }
                    sentCalls.put(request.params(), request.id());
                }
                out.write(line);
                out.flush();
            }
            return Mono.empty();
        } catch (IOException e) {
            return Mono.error(e);
        }
    }

    /**
     * Cancels a tools/call request: if it was sent, the server is told
     * ({@code notifications/cancelled} with its id); if not, it never will be. The SDK's client
     * does neither (2.1.0), and only the transport knows the id it gave the request.
     *
     * @param params the request's params, the very object handed to the client's callTool
     * @return whether the request had been sent, so the server may have acted on it
     */
    boolean cancel(Object params, String reason) {
        Object id;
        synchronized (this) {
            id = sentCalls.remove(params);
            if (id == null) {
                cancelledBeforeSent.add(params);
                return false;
            }
        }
        Map<String, Object> cancelled = new LinkedHashMap<>();
        cancelled.put("requestId", id);
        cancelled.put("reason", reason);
        Process current = process;
        if (current != null) {
            write(current, new McpSchema.JSONRPCNotification(McpSchema.JSONRPC_VERSION, "notifications/cancelled",
                    cancelled)).onErrorComplete().subscribe();
        }
        return true;
    }

    /** The request was answered (or given up on after cancel): nothing to remember about it. */
    /** Sends the progress notifications of the call sent with {@code token} to {@code sink} until it is forgotten. */
    void onProgress(String token, Consumer<Map<String, Object>> sink) {
        notifications.onProgress(token, sink);
    }

    void forgetProgress(String token) {
        notifications.forgetProgress(token);
    }

    synchronized void forget(Object params) {
        sentCalls.remove(params);
        cancelledBeforeSent.remove(params);
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Mono.<Void>fromRunnable(this::stop).subscribeOn(Schedulers.boundedElastic());
    }

    /** Closes stdin (the spec's shutdown signal), then SIGTERM, then SIGKILL, each after a short wait. */
    void stop() {
        closing = true;
        started.completeExceptionally(new IOException("server " + settings.name() + " was stopped"));
        Process current = process;
        if (current == null) {
            return;
        }
        List<ProcessHandle> children = current.descendants().toList();
        try {
            current.getOutputStream().close();
        } catch (IOException e) {
            // already gone
        }
        try {
            if (!current.waitFor(STOP_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                current.destroy();
                if (!current.waitFor(STOP_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                    current.destroyForcibly();
                }
            }
        } catch (InterruptedException e) {
            current.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        children.forEach(ProcessHandle::destroyForcibly);
    }

    boolean isAlive() {
        Process current = process;
        return current != null && current.isAlive();
    }

    long pid() {
        Process current = process;
        return current == null ? -1 : current.pid();
    }

    /** The exit code of a process that ended, null while it runs or before it started. */
    Integer exitCode() {
        Process current = process;
        return current == null || current.isAlive() ? null : current.exitValue();
    }

    @Override
    public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
        return McpJson.MAPPER.convertValue(data, typeRef);
    }

    private static void daemon(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
    }

    private static String abbreviate(String line) {
        return line.length() <= 200 ? line : line.substring(0, 200) + "...";
    }
}
