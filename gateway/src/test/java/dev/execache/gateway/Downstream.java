package dev.execache.gateway;

import org.awaitility.Awaitility;
import dev.execache.tools.mcp.McpServerSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * The real MCP servers the gateway tests start: the reference servers installed by the build,
 * and the tests' own lab server (lab-server.mjs), which counts the calls it serves. A module whose
 * tests use them installs them (npm ci), names their node_modules in the system property
 * execache.testNodeModules and puts lab-server.mjs beside it.
 */
public final class Downstream {
    private Downstream() {
    }

    public static Path nodeModules() {
        String property = System.getProperty("execache.testNodeModules");
        if (property == null || !Files.isDirectory(Path.of(property))) {
            throw new IllegalStateException("the build installs the MCP test peers and names them in the system"
                    + " property execache.testNodeModules; it is " + property);
        }
        return Path.of(property);
    }

    public static McpServerSettings lab(String name, boolean trustAnnotations) {
        return lab(name, trustAnnotations, Map.of());
    }

    /** @param env for example LAB_HOLD_RESTART (see lab-server.mjs) */
    public static McpServerSettings lab(String name, boolean trustAnnotations, Map<String, String> env) {
        return new McpServerSettings(name, "node", List.of(nodeModules().resolveSibling("lab-server.mjs").toString()),
                env, null, trustAnnotations);
    }

    public static McpServerSettings memory(Path dir) {
        return new McpServerSettings("memory", nodeModules().resolve(".bin/mcp-server-memory").toString(), List.of(),
                Map.of("MEMORY_FILE_PATH", dir.resolve("memory.jsonl").toString()), dir, true);
    }

    public static McpServerSettings filesystem(Path root) {
        return new McpServerSettings("fs", nodeModules().resolve(".bin/mcp-server-filesystem").toString(),
                List.of(root.toString()), Map.of(), root, true);
    }

    /** Waits for a condition, polling; fails with {@code what} when it does not come within the bound. */
    public static void await(String what, Duration bound, BooleanSupplier condition) {
        Awaitility.await(what).atMost(bound).pollInSameThread().pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(50)).until(condition::getAsBoolean);
    }
}
