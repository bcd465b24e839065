package dev.execache.cli;

import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.Awaitility;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * {@code java -jar execache.jar serve ...} as a separate process, spoken to by the MCP SDK's
 * own client over stdio. The jar is the one the build packaged (system property
 * {@code execache.jar}).
 */
final class ServeProcess implements AutoCloseable {
    /**
     * A bound on waiting, not a speed check: at load 46 on 2 cores one serve took 21.5 s to
     * answer initialize, and three starting together with their Deno pools took over 60 s.
     */
    static final Duration REQUEST_TIMEOUT = Duration.ofMinutes(3);
    private static final Duration STARTUP = REQUEST_TIMEOUT;

    private final String marker = UUID.randomUUID().toString();
    private final List<String> stderr = new CopyOnWriteArrayList<>();
    private final McpAsyncClient client;
    /**
     * Sends one request at a time: the SDK's stdio client drops a message when two threads send
     * at once and one of them is descheduled mid-send for 100 ms, as happens on a loaded machine
     * (modelcontextprotocol/java-sdk #875: the fix retries for 100 ms only). Calls still run
     * concurrently; only their sending is taken in turn.
     */
    private final Object sending = new Object();
    private ProcessHandle process;
    private boolean killed;

    private ServeProcess(Map<String, String> env, List<String> arguments) {
        StdioClientTransport transport = new StdioClientTransport(
                ServerParameters.builder(java()).args(command(marker, arguments)).env(env).build(),
                new JacksonMcpJsonMapper(new ObjectMapper()));
        transport.setStdErrorHandler(stderr::add);
        this.client = McpClient.async(transport)
                .requestTimeout(REQUEST_TIMEOUT)
                .initializationTimeout(STARTUP)
                .clientInfo(McpSchema.Implementation.builder("execache-it", "1").build())
                .build();
    }

    /** Starts the server and initializes a session with it. */
    static ServeProcess start(Map<String, String> env, String... arguments) {
        ServeProcess server = new ServeProcess(env, List.of(arguments));
        try {
            server.client.initialize().block();
        } catch (RuntimeException e) {
            throw new IllegalStateException("execache serve did not initialize; its stderr:\n"
                    + String.join("\n", server.stderr), e);
        }
        return server;
    }

    static ServeProcess start(String... arguments) {
        return start(Map.of(), arguments);
    }

    /** The command line that runs the packaged jar; {@code marker} lets a test find the process. */
    static List<String> command(String marker, List<String> arguments) {
        List<String> command = new ArrayList<>(ServeArchive.options());
        command.addAll(List.of("-Dexecache.it=" + marker, "-jar", jar().toString(), "serve"));
        command.addAll(arguments);
        return command;
    }

    static String java() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    static Path jar() {
        String jar = System.getProperty("execache.jar");
        if (jar == null) {
            throw new IllegalStateException("system property execache.jar is not set; run the ITs through failsafe");
        }
        return Path.of(jar);
    }

    McpAsyncClient client() {
        return client;
    }

    CallToolResult call(String tool, Map<String, Object> arguments) {
        CompletableFuture<CallToolResult> answer;
        synchronized (sending) {
            // subscribing sends the request on this thread, the session being initialized
            answer = client.callTool(McpSchema.CallToolRequest.builder(tool).arguments(arguments).build()).toFuture();
        }
        try {
            return answer.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            answer.cancel(true);
            throw new IllegalStateException("interrupted while waiting for " + tool, e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException runtime ? runtime : new IllegalStateException(e.getCause());
        }
    }

    List<String> stderr() {
        return List.copyOf(stderr);
    }

    /** Waits until a line of stderr matches. */
    String awaitStderr(Predicate<String> wanted, Duration limit) {
        try {
            return Awaitility.await("a line on stderr").atMost(limit).pollInSameThread().pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> stderr.stream().filter(wanted).findFirst(), Optional::isPresent).orElseThrow();
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("no such line on stderr within " + limit + "; stderr was:\n" + String.join("\n", stderr), e);
        }
    }

    /** The server's process. */
    ProcessHandle process() {
        if (process == null) {
            process = find(marker);
        }
        return process;
    }

    static ProcessHandle find(String marker) {
        return ProcessHandle.current().children()
                .filter(child -> child.info().arguments().map(args -> List.of(args).contains("-Dexecache.it=" + marker))
                        .orElse(false))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no child process with marker " + marker));
    }

    /**
     * Kills the server at once (SIGKILL), as a crash would, with whatever it had started; calls
     * still waiting for it fail.
     */
    void kill() throws InterruptedException {
        ProcessHandle handle = process();
        List<ProcessHandle> runners = handle.descendants().toList();
        handle.destroyForcibly();
        handle.onExit().orTimeout(10, TimeUnit.SECONDS).join();
        runners.forEach(ProcessHandle::destroyForcibly);
        killed = true;
        client.close();
    }

    /** Ends the session as the SDK's client does: SIGTERM, then waits for the exit. */
    @Override
    public void close() {
        if (!killed) {
            client.closeGracefully().block();
        }
    }

}
