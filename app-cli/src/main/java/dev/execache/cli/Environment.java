package dev.execache.cli;

import java.io.InputStream;
import java.nio.file.Path;
import java.util.Map;

/** What the process was started with: its environment variables, directory and standard input. */
record Environment(Map<String, String> variables, Path workingDir, InputStream stdin) {
    Environment {
        variables = Map.copyOf(variables);
        workingDir = workingDir.toAbsolutePath();
    }
}
