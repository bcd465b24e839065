package dev.execache.cli.settings;

import java.io.InputStream;
import java.nio.file.Path;
import java.util.Map;

/** What the process was started with: its environment variables, directory and standard input. */
public record Environment(Map<String, String> variables, Path workingDir, InputStream stdin) {
    public Environment {
        variables = Map.copyOf(variables);
        workingDir = workingDir.toAbsolutePath();
    }
}
