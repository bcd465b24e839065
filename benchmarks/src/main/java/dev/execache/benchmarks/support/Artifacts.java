package dev.execache.benchmarks.support;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What the whole-process figures start, found where a build of this checkout leaves it: the
 * {@code java} of this JVM, {@code app-cli/target/execache.jar} and app-cli's MCP test peers.
 */
public final class Artifacts {

    private Artifacts() {
    }

    /** The {@code java} launcher of the JVM running the figures. */
    public static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** {@code -Dexecache.jar}, else app-cli's jar beside this benchmarks jar, else under the working directory. */
    public static Path execacheJar() throws URISyntaxException {
        String configured = System.getProperty("execache.jar");
        if (configured != null) {
            return Path.of(configured);
        }
        List<Path> candidates = new ArrayList<>();
        checkout().ifPresent(root -> candidates.add(root.resolve("app-cli/target/execache.jar")));
        candidates.add(Path.of("app-cli/target/execache.jar").toAbsolutePath());
        return candidates.stream().filter(Files::isRegularFile).findFirst().orElseThrow(() -> new IllegalStateException(
                "no execache.jar at " + candidates + ": build it (./mvnw -B -q -DskipTests package -pl app-cli -am)"
                        + " or name it with -Dexecache.jar=PATH"));
    }

    /**
     * {@code -Dexecache.node}, else app-cli's test peers (copied to {@code app-cli/target/node} by its
     * build) under the working directory or beside this jar; installed with {@code npm ci} when missing.
     */
    public static Path nodeDirectory() throws URISyntaxException, IOException, InterruptedException {
        String configured = System.getProperty("execache.node");
        List<Path> candidates = new ArrayList<>();
        if (configured != null) {
            candidates.add(Path.of(configured));
        } else {
            candidates.add(Path.of("app-cli/target/node").toAbsolutePath());
            checkout().ifPresent(root -> candidates.add(root.resolve("app-cli/target/node")));
        }
        Path node = candidates.stream()
                .filter(dir -> Files.isRegularFile(dir.resolve("package-lock.json")))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no MCP test peers in " + candidates + ": build app-cli"
                        + " (./mvnw -B -q -DskipTests package -pl benchmarks -am) or name them with -Dexecache.node=DIR"));
        if (!Files.isDirectory(node.resolve("node_modules/@modelcontextprotocol/sdk"))) {
            Process install = new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
                    .directory(node.toFile()).inheritIO().start();
            if (install.waitFor() != 0) {
                throw new IllegalStateException("npm ci in " + node + " failed");
            }
        }
        return node;
    }

    /** The checkout this jar was built in ({@code benchmarks/target/benchmarks.jar} is three levels down). */
    private static Optional<Path> checkout() throws URISyntaxException {
        Path self = Path.of(Artifacts.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        return Optional.ofNullable(self.getParent()).map(Path::getParent).map(Path::getParent);
    }
}
