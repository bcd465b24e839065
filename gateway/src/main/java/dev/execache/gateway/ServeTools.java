package dev.execache.gateway;


import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.Agents;
import dev.execache.core.CacheStatus;
import dev.execache.core.CachedExecutor;
import dev.execache.core.ErrorType;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.Freshness;
import dev.execache.core.Limits;
import dev.execache.core.UnknownToolException;
import dev.execache.core.spi.SandboxUnavailableException;
import dev.execache.core.spi.Telemetry;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import io.modelcontextprotocol.spec.McpSchema.ToolAnnotations;
import java.lang.System.Logger.Level;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The tools {@code execache serve} offers: {@code execute_code}, {@code cache_stats},
 * {@code invalidate_tool} and {@code clear_cache}, and with downstream servers {@code describe_tools},
 * {@code inspect_tool_call} and the gateway tools. A bad argument or a failed run is a tool
 * error ({@code isError}) with a message that names the problem; nothing here throws to the
 * protocol layer.
 */
public final class ServeTools {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");

    /** What serve tells an agent in its initialize answer, before the servers' own instructions. */
    public static final String INSTRUCTIONS = "execache runs TypeScript/JavaScript in a locked-down Deno sandbox and caches "
            + "the results: call execute_code with the code (the body of an async function; `return` gives the result) "
            + "and a context object. The same code, context and tool versions are never run twice: a repeat is a cache "
            + "hit that returns at once. Declare the tools the code depends on in `tools` so that a new version of one "
            + "invalidates only its results.";

    /** What serve adds with servers behind it: how an agent finds their tools without listing them all. */
    static final String CODE_MODE_INSTRUCTIONS = " The servers' tools are called from that code as "
            + "`await tools.SERVER.TOOL(args)`: search_tools finds them by what they do, describe_tools gives their "
            + "TypeScript declarations (and execache's own tools' full contracts), so that their definitions and "
            + "their data need not pass through your context.";

    /**
     * The longest answer line: the TypeScript SDK's stdio client drops the connection when its
     * 10 MiB read buffer overflows, and the buffer may hold part of the next message too.
     */
    public static final int MAX_ANSWER_BYTES = 9 * 1024 * 1024;

    /** How often a run that takes longer says it is still running, when the client asked for progress. */
    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(1);
    static final String SHUTTING_DOWN = "the server is shutting down: the run was stopped and nothing was stored; "
            + "call again once it is back";

    private final CachedExecutor executor;
    private final ServeSettings settings;
    private final InFlightCalls calls = new InFlightCalls();
    /** execute_code's last successful answer: a repeated hit gives the same text (see {@link LastAnswer}). */
    private final LastAnswer lastAnswer = new LastAnswer();
    private final ScheduledExecutorService progress = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "execache-mcp-progress");
        thread.setDaemon(true);
        return thread;
    });
    private volatile BiConsumer<String, ObjectNode> notifications = (method, params) -> { };
    /** execache's own tools' names, once asked for (see {@link #lists}). */
    private volatile Set<String> ownNames;
    private final Gateway gateway;
    private final Telemetry telemetry;

    /** See {@link #awaitServersForInstructionsUntil}; by default, nothing is waited for. */
    private volatile Instant instructionsWait = Instant.MIN;

    /** serve's own tools over {@code executor}; with {@link Builder#gateway} the downstream servers' tools beside them. */
    public static Builder builder(CachedExecutor executor, ServeSettings settings) {
        return new Builder(executor, settings);
    }

    public static final class Builder {
        private final CachedExecutor executor;
        private final ServeSettings settings;
        private Gateway gateway;
        private Telemetry telemetry = Telemetry.NONE;

        private Builder(CachedExecutor executor, ServeSettings settings) {
            this.executor = Objects.requireNonNull(executor, "executor must not be null");
            this.settings = Objects.requireNonNull(settings, "settings must not be null");
        }

        /** The downstream servers' tools, offered beside execache's own; none by default. */
        public Builder gateway(Gateway servers) {
            this.gateway = servers;
            return this;
        }

        /** Where a span per MCP request is reported (the executor and the gateway report their own); none by default. */
        public Builder telemetry(Telemetry reportTo) {
            this.telemetry = Objects.requireNonNull(reportTo, "telemetry must not be null");
            return this;
        }

        public ServeTools build() {
            return new ServeTools(this);
        }
    }

    private ServeTools(Builder built) {
        this.executor = built.executor;
        this.settings = built.settings;
        this.gateway = built.gateway;
        this.telemetry = built.telemetry;
        if (gateway != null) {
            gateway.servedBy(calls, (method, params) -> notifications.accept(method, params),
                    ownSpecifications().stream().map(spec -> spec.tool().name()).collect(Collectors.toSet()));
        }
    }

    public Telemetry telemetry() {
        return telemetry;
    }

    public InFlightCalls calls() {
        return calls;
    }

    public CachedExecutor executor() {
        return executor;
    }

    public ServeSettings settings() {
        return settings;
    }

    /**
     * Until when an agent's {@code initialize} or {@code server/discover} may wait for the servers still starting,
     * so that their instructions reach it: MCP has no notice of changed instructions, and a host reads them once.
     */
    public void awaitServersForInstructionsUntil(Instant deadline) {
        this.instructionsWait = Objects.requireNonNull(deadline, "deadline must not be null");
    }

    /**
     * Waits for the servers still starting to be up (their tools too), until the deadline an agent's
     * {@code initialize} waits by at the latest; at once without servers.
     */
    public void awaitServersUntilInstructionsDeadline() throws InterruptedException {
        if (gateway != null) {
            gateway.awaitStartingServersUntil(instructionsWait);
        }
    }

    /**
     * What serve tells an agent in {@code initialize}: execache's instructions, then each server's own, under its
     * name (waiting, until the set deadline, for those still starting to say theirs; their tools come after).
     */
    public String instructions() {
        return instructions(false);
    }

    /**
     * As {@link #instructions()}; with {@code toolsToo}, waiting until the deadline for the servers still starting to
     * be up, their tools listed too: for an era whose {@code tools/list} does not wait for them.
     */
    public String instructions(boolean toolsToo) {
        if (gateway != null) {
            try {
                if (toolsToo) {
                    gateway.awaitStartingServersUntil(instructionsWait);
                } else {
                    gateway.awaitInstructionsUntil(instructionsWait);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        Map<String, String> servers = gateway == null ? Map.of() : gateway.instructions();
        StringBuilder text = new StringBuilder(INSTRUCTIONS);
        if (gateway != null) {
            text.append(CODE_MODE_INSTRUCTIONS);
        }
        servers.forEach((server, said) -> text.append("\n\n## Server ").append(server).append("\n\n").append(said));
        return text.toString();
    }

    /** Where progress notifications go (the transport, once there is one). */
    public void notifyWith(BiConsumer<String, ObjectNode> sink) {
        this.notifications = sink;
    }

    public List<OfferedTool> specifications() {
        List<OfferedTool> all = new ArrayList<>(ownSpecifications());
        if (gateway != null) {
            all.addAll(gateway.specifications());
        }
        return all;
    }

    /**
     * execache's own tools, as listed (see {@link ToolBriefs}): a gateway tool offered without its server's prefix
     * never takes one of their names.
     */
    private List<OfferedTool> ownSpecifications() {
        String more = gateway == null ? "" : " Code calls the servers' tools as `await tools.SERVER.TOOL(args)`;"
                + " search_tools finds them, describe_tools types them.";
        String timeout = number(settings.limits().timeout().toMillis() / 1000.0);
        List<OfferedTool> own = new ArrayList<>(List.of(
                toolWithRequest(ToolBriefs.listed(describeExecuteCode(), more, timeout), this::executeCode),
                tool(ToolBriefs.listed(describeCacheStats(), "", timeout), this::cacheStats),
                tool(ToolBriefs.listed(describeInvalidateTool(), "", timeout), this::invalidateTool),
                tool(ToolBriefs.listed(describeClearCache(), "", timeout), this::clearCache)));
        if (gateway != null) {
            CodeModeTools codeMode = new CodeModeTools(gateway, this::ownDefinitions);
            own.add(tool(ToolBriefs.listed(describeSearchTools(), "", timeout), codeMode::search));
            own.add(tool(ToolBriefs.listed(describeDescribeTools(), "", timeout), codeMode::describe));
            own.add(tool(ToolBriefs.listed(describeInspectToolCall(), "", timeout), this::inspectToolCall));
        }
        return own;
    }

    /** execache's own tools' full definitions, by name: what describe_tools gives of them. */
    private Map<String, Tool> ownDefinitions() {
        Map<String, Tool> own = new LinkedHashMap<>();
        List<Tool> full = new ArrayList<>(List.of(describeExecuteCode(), describeCacheStats(), describeInvalidateTool(),
                describeClearCache()));
        if (gateway != null) {
            full.addAll(List.of(describeSearchTools(), describeDescribeTools(), describeInspectToolCall()));
        }
        full.forEach(tool -> own.put(tool.name(), tool));
        return own;
    }

    /** Whether tools/list holds the servers' tools, so that their changes are a change of the list. */
    public boolean listsServersTools() {
        return settings.expose() == Expose.ALL;
    }

    /**
     * Whether tools/list holds the tool offered as {@code name}: execache's own always, a server's tool unless serve
     * exposes code mode only (it stays callable by its name either way).
     */
    public boolean lists(String name) {
        if (settings.expose() == Expose.ALL || gateway == null) {
            return true;
        }
        Set<String> own = ownNames;
        if (own == null) {
            own = ownSpecifications().stream().map(spec -> spec.tool().name()).collect(Collectors.toUnmodifiableSet());
            ownNames = own;
        }
        return own.contains(name);
    }

    /** The gateway tools, whose list changes while serve runs; null when there are none. */
    public Gateway gateway() {
        return gateway;
    }

    private Tool describeExecuteCode() {
        double maxTimeout = settings.limits().timeout().toMillis() / 1000.0;
        String configFile = Path.of(settings.configFile()).getFileName().toString();
        return Tool.builder("execute_code", ToolSchemas.input("execute_code", configFile, number(maxTimeout), maxTimeout))
                .title("Execute code (cached)")
                .description("Runs TypeScript/JavaScript in a locked-down Deno sandbox and caches the result: the same "
                        + "code, context and tool versions return the stored result without running again. The result "
                        + "carries the value, whether it was a cache hit, the execution time, the time saved and the "
                        + "console output. A failed run is a tool error with its type (SyntaxError, RuntimeError, "
                        + "TimeoutError, MemoryError, PermissionError, SerializationError, OutputLimitError), message, "
                        + "stack, line and column (as JSON text); failures are never cached. An answer is at most "
                        + MAX_ANSWER_BYTES / (1024 * 1024) + " MiB: a larger one is an OutputLimitError.")
                .outputSchema(ToolSchemas.output("execute_code"))
                .annotations(hints("Execute code (cached)", false, false))
                .build();
    }

    private Tool describeInspectToolCall() {
        return Tool.builder("inspect_tool_call", ToolSchemas.input("inspect_tool_call"))
                .title("Inspect a cached call")
                .description("What the cache holds for one call of a gateway tool, without counting a hit and without "
                        + "calling the tool: whether it is cached, its age, the TTL left and its hits.")
                .outputSchema(ToolSchemas.output("inspect_tool_call"))
                .annotations(hints("Inspect a cached call", true, false))
                .build();
    }

    private CallToolResult inspectToolCall(Map<String, Object> arguments) {
        if (!(arguments.get("tool") instanceof String tool) || tool.isBlank()) {
            return failure("tool: give the gateway tool's name (SERVER__TOOL) as a non-empty string");
        }
        Object given = arguments.getOrDefault("arguments", Map.of());
        if (!(given instanceof Map<?, ?> callArguments)) {
            return failure("arguments: must be an object, the call's arguments");
        }
        if (!gateway.names().contains(tool)) {
            return failure("tool: no gateway tool is called '" + tool + "' (known: "
                    + String.join(", ", new TreeSet<>(gateway.names())) + ")");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> args = (Map<String, Object>) callArguments;
        Gateway.Inspected inspected = gateway.inspect(tool, args);
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("tool", tool);
        node.put("cached", inspected.info().isPresent());
        node.put("key", inspected.key());
        inspected.info().ifPresent(info -> {
            node.put("ageSeconds", info.age().toMillis() / 1000.0);
            node.put("ttlLeftSeconds", info.ttlLeft().toMillis() / 1000.0);
            node.put("hits", info.hits());
        });
        return structured(node, false);
    }

    private Tool describeDescribeTools() {
        return Tool.builder("describe_tools", ToolSchemas.input("describe_tools"))
                .title("Describe tools")
                .description("TypeScript declarations of the tools that code run by execute_code can call, as "
                        + "`await tools.SERVER.TOOL(args)`: `declare const tools: { SERVER: { TOOL(args: {...}): "
                        + "Promise<...> } }`, from each tool's input and output schemas, with its description as a doc "
                        + "comment. A tool gives its structured content, else its text (parsed when it is JSON), else "
                        + "its content array; a tool error rejects with an Error carrying the tool's message. "
                        + "Which tools: those named (names, SERVER__TOOL or SERVER.TOOL; an unknown name is an error "
                        + "naming it), a server's (server), the best matches of a search (query), or every one "
                        + "(all: true); nothing named gives only how to ask. The name of one of execache's own tools "
                        + "gives its full definition (own). "
                        + "Also each server's state: up, starting (its tools join when it is up) or unavailable, and why.")
                .outputSchema(ToolSchemas.output("describe_tools"))
                .annotations(hints("Describe tools", true, false))
                .build();
    }

    private Tool describeSearchTools() {
        return Tool.builder("search_tools", ToolSchemas.input("search_tools"))
                .title("Search tools")
                .description("Finds the servers' tools by what they do: BM25 over each tool's name and title "
                        + "(weighted most), description and what its server's instructions say of it, server, and "
                        + "parameters (weighted least), best first. Words are split at camelCase, snake_case and "
                        + "kebab-case, stemmed (files, filed: file), common words (the, what, me) left out, and a "
                        + "query's words also match their synonyms at half weight (remove: delete, folder: "
                        + "directory). Each match gives its name (SERVER__TOOL), how code calls it "
                        + "(tools.SERVER.TOOL), the first line of its description and its TypeScript signature; "
                        + "describe_tools gives the full declarations. A server still starting is waited for, and one "
                        + "that joined a moment ago is searched at once.")
                .outputSchema(ToolSchemas.output("search_tools"))
                .annotations(hints("Search tools", true, false))
                .build();
    }

    private CallToolResult executeCode(CallToolRequest call, RequestOrigin origin) {
        Map<String, Object> arguments = call.arguments() == null ? Map.of() : call.arguments();
        ExecutionRequest request;
        try {
            request = executionRequest(arguments, origin.agent()).withFreshness(freshnessOf(call, arguments));
        } catch (IllegalArgumentException e) {
            return failure(e.getMessage());
        }
        if (gateway != null) {
            try {
                gateway.awaitServersNamedIn(request.code());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return shuttingDown();
            }
        }
        Object id = origin.requestId();
        // in the initialize era the call's agent is at hand (see Gateway.askingAgent): the servers of the code's
        // calls may ask it what they would ask it of a call it made itself
        RunProgress heard = new RunProgress(call.progressToken(), notifications, Gateway.callingAgent(),
                origin.person());
        ScheduledFuture<?> ticking = progressTicks(call.progressToken(), heard);
        ExecutionOutcome outcome;
        try {
            outcome = calls.run(id, () -> executor.execute(request, heard));
        } catch (CancellationException e) {
            // the client cancelled it (no answer goes out) or the server is stopping
            return shuttingDown();
        } catch (IllegalArgumentException e) {
            return failure(e.getMessage() + (e instanceof UnknownToolException ? knownToolsHint() : ""));
        } catch (RuntimeException e) {
            Throwable cause = infrastructureCause(e);
            if (cause == null) {
                throw e;
            }
            LOG.log(Level.WARNING, "the sandbox cannot run code: " + cause.getMessage());
            return failure("the sandbox cannot run code: " + cause.getMessage());
        } finally {
            if (ticking != null) {
                ticking.cancel(false);
            }
            heard.answered();
        }
        ExecutionResult result = outcome.result();
        ObjectNode node = Json.MAPPER.createObjectNode();
        if (result.isSuccess()) {
            node.set("result", Json.rawJson(result.value()));
            node.put("hit", outcome.isHit());
        } else {
            node.set("error", Json.error(result.error()));
        }
        node.put("cache", outcome.status().name().toLowerCase(Locale.ROOT));
        node.put("key", outcome.key());
        node.put("executionTimeMs", Json.millis(result.executionTime()));
        node.put("savedMs", Json.millis(outcome.saved()));
        node.put("console", result.console());
        Json.runDetails(node, outcome);
        Map<String, Object> meta = CacheMeta.of(outcome.status(), outcome.storedAt(), outcome.expiresAt(),
                outcome.status() == CacheStatus.BYPASS ? "caching is off for this run" : outcome.notStoredBecause(),
                executor.policy().clock().instant());
        if (!result.isSuccess()) {
            CallToolResult failed = errorResult(node);
            return new CallToolResult(failed.content(), failed.isError(), failed.structuredContent(),
                    Map.of(CacheMeta.KEY, meta));
        }
        return lastAnswer.of(Json.write(node), meta, text -> structured(node, text, false));
    }

    /**
     * How fresh a result the call asks for: its {@code cache_control} argument, else its
     * {@code _meta}'s {@link CacheMeta#REQUEST_KEY}; they must agree when both are given.
     */
    private static Freshness freshnessOf(CallToolRequest call, Map<String, Object> arguments) {
        Freshness fromMeta = CacheMeta.freshnessOf(call.meta());
        Object argument = arguments.get("cache_control");
        if (argument == null) {
            return fromMeta;
        }
        if (!(argument instanceof String directive)) {
            throw new IllegalArgumentException("cache_control: must be \"no-cache\" or \"max-age=SECONDS\", not "
                    + Json.jsonType(argument));
        }
        Freshness fromArgument;
        try {
            fromArgument = Freshness.parse(directive);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("cache_control: " + e.getMessage());
        }
        if (fromMeta != Freshness.ANY && !fromMeta.equals(fromArgument)) {
            throw new IllegalArgumentException("cache_control: \"" + directive + "\" disagrees with _meta."
                    + CacheMeta.REQUEST_KEY + " \"" + fromMeta + "\"; give one");
        }
        return fromArgument;
    }

    /** notifications/progress every second while the run goes on, when the client sent a progressToken. */
    private ScheduledFuture<?> progressTicks(Object token, RunProgress heard) {
        if (token == null) {
            return null;
        }
        long start = System.nanoTime();
        return progress.scheduleAtFixedRate(() -> heard.running(Math.round((System.nanoTime() - start) / 1e9)),
                PROGRESS_EVERY.toMillis(), PROGRESS_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The answer to a call whose run was stopped because the server is stopping. */
    public static CallToolResult shuttingDown() {
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.set("error", errorNode("ShutdownError", SHUTTING_DOWN));
        return errorResult(node);
    }

    /** The answer to a call whose answer would be longer than a line may be. */
    public static CallToolResult answerTooLarge(long size, long limit) {
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.set("error", errorNode(ErrorType.OUTPUT_LIMIT_ERROR.displayName(),
                "the answer would be " + size + " bytes, over the limit of " + limit + " bytes that one MCP message may "
                        + "have; return less (a part, a summary, or a count)"));
        return errorResult(node);
    }

    private static ObjectNode errorNode(String type, String message) {
        ObjectNode error = Json.MAPPER.createObjectNode();
        error.put("type", type);
        error.put("message", message);
        error.put("stack", "");
        return error;
    }

    private ExecutionRequest executionRequest(Map<String, Object> arguments, String agent) {
        Object code = arguments.get("code");
        if (!(code instanceof String text) || text.isBlank()) {
            throw new IllegalArgumentException("code: give the code to run as a non-empty string");
        }
        Object context = arguments.getOrDefault("context", Map.of());
        if (!(context instanceof Map)) {
            throw new IllegalArgumentException("context: must be a JSON object, not " + Json.jsonType(context));
        }
        Set<String> tools = new LinkedHashSet<>();
        Object declared = arguments.getOrDefault("tools", List.of());
        if (!(declared instanceof List<?> names)) {
            throw new IllegalArgumentException("tools: must be an array of tool names, not " + Json.jsonType(declared));
        }
        for (Object name : names) {
            if (!(name instanceof String tool) || tool.isBlank()) {
                throw new IllegalArgumentException("tools: every item must be a non-empty tool name, not " + Json.jsonType(name));
            }
            if (!tools.add(tool)) {
                throw new IllegalArgumentException("tools: '" + tool + "' is named twice");
            }
        }
        Limits limits = settings.limits();
        Object timeout = arguments.get("timeout");
        if (timeout != null) {
            limits = limits.withTimeout(timeout(timeout, limits.timeout()));
        }
        // one request with its agent: each is checked (its context written out) as it is made
        return new ExecutionRequest(text, context, tools, limits, "", agent);
    }

    /** Deno missing and the like, also when Guice wraps it while building the sandbox on first use. */
    private static Throwable infrastructureCause(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SandboxUnavailableException) {
                return cause;
            }
        }
        return null;
    }

    private static Duration timeout(Object value, Duration max) {
        if (!(value instanceof Number number)) {
            throw new IllegalArgumentException("timeout: must be a number of seconds, not " + Json.jsonType(value));
        }
        BigDecimal seconds = new BigDecimal(number.toString());
        Duration timeout = Duration.ofNanos(seconds.movePointRight(9).min(BigDecimal.valueOf(Long.MAX_VALUE)).longValue());
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout: must be more than 0 seconds, not " + number);
        }
        if (timeout.compareTo(max) > 0) {
            throw new IllegalArgumentException("timeout: at most " + number(max.toMillis() / 1000.0)
                    + " seconds (the server's --timeout), not " + number);
        }
        return timeout;
    }

    private String knownToolsHint() {
        return "; tool versions come from tools: in "
                + settings.configFile()
                + " or --tool NAME=VERSION";
    }

    private Tool describeCacheStats() {
        return Tool.builder("cache_stats", ToolSchemas.input("cache_stats"))
                .title("Cache statistics")
                .description("What the cache has done: hits, misses, shared (answered by an identical run in flight), failed, "
                        + "uncacheable by reason, bypassed, hit rate, latency saved (total and per hit), entries, estimated "
                        + "size, evictions, expirations, invalidations, store errors; the store, its location and limits, "
                        + "since when it counts; each tool's and each agent's figures; the bytes (and estimated tokens) "
                        + "code mode kept out of agents' contexts. On a shared "
                        + "(redis) store the figures are the whole fleet's. Changes nothing.")
                .outputSchema(ToolSchemas.output("cache_stats"))
                .annotations(hints("Cache statistics", true, false))
                .build();
    }

    private CallToolResult cacheStats(Map<String, Object> arguments) {
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.setAll(settings.store().deepCopy());
        node.setAll(Json.stats(executor.policy().stats()));
        return structured(node, false);
    }

    private Tool describeInvalidateTool() {
        return Tool.builder("invalidate_tool", ToolSchemas.input("invalidate_tool"))
                .title("Invalidate a tool's results")
                .description("Removes every cached result that depended on a tool, for example after the tool changed "
                        + "without a new version. On a shared store it holds for the whole fleet. Returns how many "
                        + "entries were removed.")
                .outputSchema(ToolSchemas.output("invalidate_tool"))
                .annotations(hints("Invalidate a tool's results", false, true))
                .build();
    }

    /** Every tool here is idempotent and touches nothing outside execache's own cache. */
    private static ToolAnnotations hints(String title, boolean readOnly, boolean destructive) {
        return ToolAnnotations.builder()
                .title(title)
                .readOnlyHint(readOnly)
                .destructiveHint(destructive)
                .idempotentHint(true)
                .openWorldHint(false)
                .build();
    }

    private CallToolResult invalidateTool(Map<String, Object> arguments) {
        Object tool = arguments.get("tool");
        if (!(tool instanceof String name) || name.isBlank()) {
            return failure("tool: give the tool's name as a non-empty string");
        }
        int removed = executor.policy().invalidateTool(name);
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("tool", name);
        node.put("removed", removed);
        return structured(node, false);
    }

    private Tool describeClearCache() {
        return Tool.builder("clear_cache", ToolSchemas.input("clear_cache"))
                .title("Clear cached results")
                .description("Removes cached results: all of them, those whose key matches a glob, or the cached calls of "
                        + "the gateway tools whose name matches a glob; cached runs of code that used a removed call go "
                        + "with it. Counters stay. "
                        + "On a shared store it holds for the whole fleet. Returns how many entries were removed.")
                .outputSchema(ToolSchemas.output("clear_cache"))
                .annotations(hints("Clear cached results", false, true))
                .build();
    }

    private CallToolResult clearCache(Map<String, Object> arguments) {
        if (arguments.containsKey("tool")) {
            return clearToolCalls(arguments);
        }
        Object pattern = arguments.getOrDefault("pattern", "*");
        if (!(pattern instanceof String glob) || glob.isBlank()) {
            return failure("pattern: must be a non-empty glob such as 'v1:*'");
        }
        int removed;
        try {
            removed = executor.policy().clear(glob);
        } catch (IllegalArgumentException e) {
            return failure("pattern: " + e.getMessage());
        }
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("pattern", glob);
        node.put("removed", removed);
        return structured(node, false);
    }

    private CallToolResult clearToolCalls(Map<String, Object> arguments) {
        if (arguments.containsKey("pattern")) {
            return failure("give either pattern (a glob over keys) or tool (a glob over tool names), not both");
        }
        if (!(arguments.get("tool") instanceof String glob) || glob.isBlank()) {
            return failure("tool: must be a non-empty glob over tool names such as 'fs__read_*'");
        }
        if (gateway == null) {
            return failure("tool: there are no gateway tools (no servers: in the config file)");
        }
        int removed;
        try {
            removed = gateway.clear(glob);
        } catch (IllegalArgumentException e) {
            return failure("tool: " + e.getMessage());
        }
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("tool", glob);
        node.put("removed", removed);
        return structured(node, false);
    }

    private static OfferedTool toolWithRequest(Tool tool, OfferedTool.Handler handler) {
        Set<String> names = argumentNames(tool);
        return new OfferedTool(tool, (request, origin) -> call(tool.name(), names,
                arguments -> handler.call(request, origin), request));
    }

    private static OfferedTool tool(Tool tool, Function<Map<String, Object>, CallToolResult> handler) {
        Set<String> names = argumentNames(tool);
        return new OfferedTool(tool, (request, origin) -> call(tool.name(), names, handler, request));
    }

    /**
     * @param names the arguments the tool takes; any other is a tool error, as the input schema's
     *     {@code additionalProperties: false} says (the handler checks each one's type and range, so
     *     no schema is validated per call)
     */
    private static CallToolResult call(String name, Set<String> names, Function<Map<String, Object>, CallToolResult> handler,
            CallToolRequest request) {
        Map<String, Object> arguments = request.arguments() == null ? Map.of() : request.arguments();
        if (!names.containsAll(arguments.keySet())) {
            Set<String> unknown = new TreeSet<>(arguments.keySet());
            unknown.removeAll(names);
            return failure(String.join(", ", unknown) + ": not " + (unknown.size() == 1 ? "an argument" : "arguments")
                    + " of " + name + " (it takes " + (names.isEmpty() ? "none" : String.join(", ", names)) + ")");
        }
        try {
            return handler.apply(arguments);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, name + " failed unexpectedly", e);
            return failure(name + " failed unexpectedly: " + e);
        }
    }

    /** The names of the input schema's properties, in its order. */
    private static Set<String> argumentNames(Tool tool) {
        return tool.inputSchema().get("properties") instanceof Map<?, ?> properties
                ? properties.keySet().stream().map(String::valueOf).collect(Collectors.toCollection(LinkedHashSet::new))
                : Set.of();
    }

    /** The node as structured content, and as JSON text for clients that read only text. */
    private static CallToolResult structured(ObjectNode node, boolean isError) {
        return structured(node, Json.write(node), isError);
    }

    static CallToolResult structured(ObjectNode node, String text, boolean isError) {
        return CallToolResult.builder()
                .content(List.of(TextContent.builder(text).build()))
                .structuredContent(node)
                .isError(isError)
                .build();
    }

    /**
     * A failed run: {@code isError} with the typed error and the run's facts as JSON text, and no
     * structured content, which is for results that match the output schema (the TypeScript SDK
     * client validates any structured content it gets, also on errors).
     */
    private static CallToolResult errorResult(ObjectNode node) {
        return CallToolResult.builder()
                .content(new ArrayList<>(List.of(TextContent.builder(Json.write(node)).build())))
                .isError(true)
                .build();
    }

    static CallToolResult failure(String message) {
        return CallToolResult.builder()
                .content(new ArrayList<>(List.of(TextContent.builder(message).build())))
                .isError(true)
                .build();
    }


    private static String number(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }
}
