package dev.execache.benchmarks.process;

import java.nio.file.Path;

/**
 * The arguments the figures of serve in front of a test server take: {@code EXECACHE_JAR
 * SERVER_MJS [ROUNDS]}, and what follows them.
 */
record ServerArguments(Path jar, Path server, int rounds) {

    static ServerArguments of(String[] args, int defaultRounds) {
        if (args.length < 2) {
            throw new IllegalArgumentException("arguments: EXECACHE_JAR SERVER_MJS [ROUNDS]...");
        }
        return new ServerArguments(Path.of(args[0]), Path.of(args[1]),
                args.length > 2 ? Integer.parseInt(args[2]) : defaultRounds);
    }
}
