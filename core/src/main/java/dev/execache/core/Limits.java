package dev.execache.core;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The limits one run executes under.
 *
 * @param timeout wall-clock time after which the run is killed; the code's tool calls count
 * @param memoryMb memory the run may use, in MiB
 * @param allowRead paths the code may read; none by default
 * @param maxOutputBytes console output kept before the run is ended
 * @param maxResultBytes size of the result JSON before the run is ended
 * @param workingDirectory the absolute directory relative paths in the code resolve against
 *     (reading there still needs {@code allowRead}); empty for none, then they resolve against
 *     the root
 * @param maxToolCalls tool calls the code may make; one more is an error in the code
 * @param maxToolBytes bytes the code's tool calls may return in all; past it a call is an error
 */
public record Limits(Duration timeout, int memoryMb, List<String> allowRead, long maxOutputBytes, long maxResultBytes,
        String workingDirectory, int maxToolCalls, long maxToolBytes) {
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    public static final int DEFAULT_MEMORY_MB = 512;
    public static final long DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
    public static final long DEFAULT_MAX_RESULT_BYTES = 10 * 1024 * 1024;
    public static final int DEFAULT_MAX_TOOL_CALLS = 1000;
    public static final long DEFAULT_MAX_TOOL_BYTES = 64L * 1024 * 1024;
    public static final Limits DEFAULTS = new Limits(
            DEFAULT_TIMEOUT, DEFAULT_MEMORY_MB, List.of(), DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_RESULT_BYTES, "");

    public Limits {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
        if (memoryMb < 16) {
            throw new IllegalArgumentException("memoryMb must be at least 16: " + memoryMb);
        }
        allowRead = List.copyOf(Objects.requireNonNull(allowRead, "allowRead must not be null"));
        for (String path : allowRead) {
            if (path.isBlank()) {
                throw new IllegalArgumentException("allowRead must not contain a blank path");
            }
        }
        if (maxOutputBytes <= 0) {
            throw new IllegalArgumentException("maxOutputBytes must be positive: " + maxOutputBytes);
        }
        if (maxResultBytes <= 0) {
            throw new IllegalArgumentException("maxResultBytes must be positive: " + maxResultBytes);
        }
        Objects.requireNonNull(workingDirectory, "workingDirectory must not be null (empty for none)");
        if (!workingDirectory.isEmpty() && !Path.of(workingDirectory).isAbsolute()) {
            throw new IllegalArgumentException("workingDirectory must be an absolute path: " + workingDirectory);
        }
        if (maxToolCalls < 0) {
            throw new IllegalArgumentException("maxToolCalls must not be negative: " + maxToolCalls);
        }
        if (maxToolBytes <= 0) {
            throw new IllegalArgumentException("maxToolBytes must be positive: " + maxToolBytes);
        }
    }

    public Limits(Duration timeout, int memoryMb, List<String> allowRead, long maxOutputBytes, long maxResultBytes,
            String workingDirectory) {
        this(timeout, memoryMb, allowRead, maxOutputBytes, maxResultBytes, workingDirectory, DEFAULT_MAX_TOOL_CALLS,
                DEFAULT_MAX_TOOL_BYTES);
    }

    public Limits(Duration timeout, int memoryMb, List<String> allowRead, long maxOutputBytes, long maxResultBytes) {
        this(timeout, memoryMb, allowRead, maxOutputBytes, maxResultBytes, "");
    }

    public Limits withTimeout(Duration newTimeout) {
        return new Limits(newTimeout, memoryMb, allowRead, maxOutputBytes, maxResultBytes, workingDirectory,
                maxToolCalls, maxToolBytes);
    }

    public Limits withMemoryMb(int newMemoryMb) {
        return new Limits(timeout, newMemoryMb, allowRead, maxOutputBytes, maxResultBytes, workingDirectory,
                maxToolCalls, maxToolBytes);
    }

    public Limits withAllowRead(List<String> paths) {
        return new Limits(timeout, memoryMb, paths, maxOutputBytes, maxResultBytes, workingDirectory, maxToolCalls,
                maxToolBytes);
    }

    public Limits withMaxOutputBytes(long bytes) {
        return new Limits(timeout, memoryMb, allowRead, bytes, maxResultBytes, workingDirectory, maxToolCalls,
                maxToolBytes);
    }

    public Limits withMaxResultBytes(long bytes) {
        return new Limits(timeout, memoryMb, allowRead, maxOutputBytes, bytes, workingDirectory, maxToolCalls,
                maxToolBytes);
    }

    public Limits withWorkingDirectory(String directory) {
        return new Limits(timeout, memoryMb, allowRead, maxOutputBytes, maxResultBytes, directory, maxToolCalls,
                maxToolBytes);
    }

    public Limits withMaxToolCalls(int calls) {
        return new Limits(timeout, memoryMb, allowRead, maxOutputBytes, maxResultBytes, workingDirectory, calls,
                maxToolBytes);
    }

    public Limits withMaxToolBytes(long bytes) {
        return new Limits(timeout, memoryMb, allowRead, maxOutputBytes, maxResultBytes, workingDirectory, maxToolCalls,
                bytes);
    }
}
