package dev.execache.benchmarks.process;

import dev.execache.benchmarks.support.Artifacts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code execache serve --store memory} as the figures start it, with a config file of its own:
 * either with no servers or with the tests' lab server (node) as its one downstream server,
 * {@code lab}. Its JVM has the compiler flags the launchers give serve on stdio (the quick compiler
 * alone, on one thread); {@code -Dexecache.serveOptions="..."} passes other JVM options instead, to
 * compare flags or to profile the servers measured.
 */
public final class Serve {
    /** The compiler flags the launchers give serve on stdio (dist/src/main/bin/execache). */
    private static final String STDIO_FLAGS = "-XX:TieredStopAtLevel=1 -XX:CICompilerCount=1";

    private Serve() {
    }

    /**
     * An {@code execache.yaml} listing the lab server under {@code servers:}, its reads cached ({@code cache: true}: a
     * local server's reads are otherwise asked every time, and a figure of a hit would time a call to the server).
     */
    public static String labConfig(Path lab) {
        return "servers:\n  lab:\n    command: node\n    args: [\"" + lab + "\"]\n    cache: true\n";
    }

    /** The command line, with a config file written in {@code directory} that lists {@code lab} when given. */
    public static List<String> command(Path jar, Path directory, Path lab) throws IOException {
        Files.createDirectories(directory);
        return command(jar, Files.writeString(directory.resolve("execache.yaml"),
                lab == null ? "# no servers\n" : labConfig(lab)));
    }

    /** The command line with the config file given. */
    public static List<String> command(Path jar, Path config) {
        List<String> command = new ArrayList<>();
        command.add(Artifacts.java());
        String options = System.getProperty("execache.serveOptions", STDIO_FLAGS).strip();
        if (!options.isEmpty()) {
            command.addAll(List.of(options.split("\\s+")));
        }
        command.addAll(List.of("-jar", jar.toString(), "serve", "--store", "memory", "--config", config.toString()));
        return command;
    }
}
